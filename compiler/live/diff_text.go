package live

import (
	"fmt"
	"io"
	"strings"

	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/internal/knative"
)

func (r Ref) String() string {
	label := knative.KindLabel(r.Group, r.Kind)
	if r.Namespace == "" {
		return label + " " + r.Name
	}
	return label + " " + r.Namespace + "/" + r.Name
}

// WriteText writes the report as knc diff --base does, then what the
// apply would prune and what the API server refuses.
func (r *DiffReport) WriteText(w io.Writer, colour bool) error {
	if err := r.Report.WriteText(w, colour); err != nil {
		return err
	}
	var b strings.Builder
	if len(r.Prune) > 0 {
		fmt.Fprintf(&b, "\nPruned by the apply (%d; belonging to the output by %s)\n", len(r.Prune), r.Inventory)
		for _, p := range r.Prune {
			fmt.Fprintf(&b, "  - %s\n", p)
		}
	}
	if len(r.Rejected) > 0 {
		fmt.Fprintf(&b, "\nRefused by the API server: the apply would fail (%d)\n", len(r.Rejected))
		for _, x := range r.Rejected {
			fmt.Fprintf(&b, "  ! %s: %s\n", x.Ref, x.Message)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// WriteMarkdown writes the report as knc diff --base -o markdown does,
// then what the apply would prune and what the API server refuses.
func (r *DiffReport) WriteMarkdown(w io.Writer, opts diff.MarkdownOptions) error {
	if err := r.Report.WriteMarkdown(w, opts); err != nil {
		return err
	}
	var b strings.Builder
	if len(r.Prune) > 0 {
		fmt.Fprintf(&b, "\n#### Pruned by the apply (%d)\n\nBelonging to the output by %s.\n\n", len(r.Prune), r.Inventory)
		for _, p := range r.Prune {
			fmt.Fprintf(&b, "- `%s`\n", p)
		}
	}
	if len(r.Rejected) > 0 {
		fmt.Fprintf(&b, "\n#### Refused by the API server (%d)\n\nThe apply would fail.\n\n", len(r.Rejected))
		for _, x := range r.Rejected {
			fmt.Fprintf(&b, "- `%s`: %s\n", x.Ref, strings.ReplaceAll(x.Message, "\n", " "))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}
