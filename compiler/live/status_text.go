package live

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the status as a table whose NAME column draws the tree:
// a Broker's Triggers and a Channel's Subscriptions below it. Ages are
// taken at now. The last column holds the address of an object that is
// ready and the message of one that is not, which says why.
func (s *Status) WriteText(w io.Writer, now time.Time) error {
	if len(s.Objects) == 0 {
		_, err := fmt.Fprintln(w, "No Knative objects found.")
		return err
	}
	// The table is written to a buffer so that the padding of an empty
	// last column can be trimmed.
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NAMESPACE\tNAME\tREADY\tREASON\tAGE\tADDRESS OR MESSAGE")
	row := func(o Object, branch string) {
		ready := o.Ready
		if o.Missing {
			ready = "Missing"
		}
		fmt.Fprintf(tw, "%s\t%s%s/%s\t%s\t%s\t%s\t%s\n", o.Namespace, branch, o.Kind, o.Name, dash(ready), dash(o.Reason), age(o.Created, now), lastColumn(o))
	}
	for _, root := range s.Objects {
		row(root, "")
		for i, child := range root.Children {
			branch := "├─ "
			if i == len(root.Children)-1 {
				branch = "└─ "
			}
			row(child, branch)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	var out strings.Builder
	for l := range strings.Lines(buf.String()) {
		out.WriteString(strings.TrimRight(l, " \n"))
		out.WriteByte('\n')
	}
	fmt.Fprintf(&out, "\n%d of %d not ready.\n", s.NotReady, s.Total)
	_, err := io.WriteString(w, out.String())
	return err
}

// lastColumn is what explains the state: the address, sink or subscriber
// of a ready object, the message of one that is not.
func lastColumn(o Object) string {
	if o.IsReady() {
		switch {
		case o.Address != "":
			return o.Address
		case o.SinkURI != "":
			return "→ " + o.SinkURI
		case o.SubscriberURI != "":
			return "→ " + o.SubscriberURI
		}
		return ""
	}
	if o.Message != "" {
		return o.Message
	}
	if o.Ready == "" && !o.Missing {
		return "no Ready condition yet: is the runtime of this namespace running?"
	}
	return ""
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
