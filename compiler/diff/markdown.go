package diff

import (
	"bufio"
	"bytes"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/internal/topology"
)

// MarkdownMarker starts every Markdown report, so that a bot can find its
// earlier comment on a pull request and update it instead of adding one.
const MarkdownMarker = "<!-- knc-diff -->"

// MarkdownOptions configure WriteMarkdown.
type MarkdownOptions struct {
	// Graph adds a Mermaid drawing of what changed.
	Graph bool
	// MaxGraphNodes leaves the drawing out when it would have more
	// nodes; 0 means 150, about what a comment still shows legibly.
	MaxGraphNodes int
}

// WriteMarkdown writes the report for a pull-request comment: a summary
// table first, immutable-field errors next, then each section of details
// folded in a <details> block, and optionally a graph of what changed.
func (r *Report) WriteMarkdown(w io.Writer, opts MarkdownOptions) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(MarkdownMarker + "\n")
	// A machine-readable count, for workflows that gate on it.
	fmt.Fprintf(bw, "<!-- knc-diff:violations=%d -->\n", len(r.Violations))
	fmt.Fprintf(bw, "### knc diff: %s → %s\n\n", code(r.Base), r.Head)
	if !r.Different {
		bw.WriteString("No differences in Brokers, Triggers, Channels, Subscriptions, other objects, routes or the runtime.\n")
		return bw.Flush()
	}
	s := r.Summary
	if len(s.Kinds) > 0 {
		bw.WriteString("| kind | added | removed | changed |\n|:--|--:|--:|--:|\n")
		for _, k := range s.Kinds {
			fmt.Fprintf(bw, "| %s | %s | %s | %s |\n", escapeCell(k.Kind), count(k.Added), count(k.Removed), count(k.Changed))
		}
		bw.WriteString("\n")
	}
	var facts []string
	if s.RoutesGained+s.RoutesLost > 0 {
		facts = append(facts, fmt.Sprintf("**Routes:** %d gained, %d lost", s.RoutesGained, s.RoutesLost))
	}
	if s.Filters > 0 {
		facts = append(facts, "**Filters:** "+plural(s.Filters, "change"))
	}
	if s.Deliveries > 0 {
		facts = append(facts, "**Delivery:** "+plural(s.Deliveries, "change"))
	}
	if s.Runtime > 0 {
		facts = append(facts, "**Runtime:** "+plural(s.Runtime, "change"))
	}
	if s.TestsFlipped > 0 {
		facts = append(facts, "**Test cases flipped:** "+strconv.Itoa(s.TestsFlipped))
	}
	if len(facts) > 0 {
		bw.WriteString(strings.Join(facts, " · ") + "\n\n")
	}
	if len(r.Violations) > 0 {
		bw.WriteString("> [!CAUTION]\n")
		fmt.Fprintf(bw, "> **%s to immutable fields.** Knative rejects these updates: each object must be deleted and re-created, and events in flight may be lost.\n>\n", plural(len(r.Violations), "change"))
		for _, d := range r.Violations {
			fmt.Fprintf(bw, "> - %s %s\n", code(d.Pos.String()), inlineText(d.Path+": "+d.Message))
		}
		bw.WriteString("\n")
	}
	if differ := r.differingUnits(); len(differ) > 0 {
		fmt.Fprintf(bw, "**Deploy units that differ:** %d of %d: %s\n\n", len(differ), len(r.Units), inlineText(strings.Join(differ, ", ")))
	}
	for _, sec := range r.unitSections(painter(false)) {
		fmt.Fprintf(bw, "<details><summary>%s (%d)</summary>\n\n", escapeSummary(sec.title), sec.count)
		writeFence(bw, "diff", strings.Join(sec.lines, "\n")+"\n")
		bw.WriteString("\n</details>\n\n")
	}
	if opts.Graph {
		if len(r.Units) == 0 {
			if err := writeGraph(bw, r.Graph, "Graph of what changed", opts.MaxGraphNodes); err != nil {
				return err
			}
		}
		for _, u := range r.Units {
			if err := writeGraph(bw, u.graph, "Graph of what changed in "+u.Unit, opts.MaxGraphNodes); err != nil {
				return err
			}
		}
	}
	return bw.Flush()
}

func nodeCount(g *topology.Graph) int {
	n := len(g.Outside)
	for _, ns := range g.Namespaces {
		n += len(ns.Sinks)
		for _, s := range ns.Sources {
			n += 1 + len(s.Routes)
		}
	}
	return n
}

// writeFence writes a fenced code block, with a fence longer than any run
// of backticks inside it.
func writeFence(w *bufio.Writer, lang, body string) {
	fence := "```"
	for strings.Contains(body, fence) {
		fence += "`"
	}
	w.WriteString(fence + lang + "\n" + body)
	if !strings.HasSuffix(body, "\n") {
		w.WriteString("\n")
	}
	w.WriteString(fence + "\n")
}

// code writes inline code, with enough backticks around it.
func code(s string) string {
	fence := "`"
	for strings.Contains(s, fence) {
		fence += "`"
	}
	pad := ""
	if strings.HasPrefix(s, "`") || strings.HasSuffix(s, "`") {
		pad = " "
	}
	return fence + pad + s + pad + fence
}

func count(n int) string {
	if n == 0 {
		return "·"
	}
	return strconv.Itoa(n)
}

func escapeCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// inlineText escapes what Markdown would read as markup or HTML.
func inlineText(s string) string {
	return strings.NewReplacer(`\`, `\\`, "<", "&lt;", ">", "&gt;", "*", `\*`, "_", `\_`, "`", "\\`", "[", `\[`, "]", `\]`).Replace(s)
}

// writeGraph draws g in Mermaid under a folded heading, or says why it
// does not when g has more than limit nodes (0 means 150, about what a
// comment still shows legibly).
func writeGraph(bw *bufio.Writer, g *topology.Graph, title string, limit int) error {
	if g == nil || g.Empty() {
		return nil
	}
	if limit == 0 {
		limit = 150
	}
	if n := nodeCount(g); n > limit {
		fmt.Fprintf(bw, "_The %s has %d nodes, too many to draw here; run `knc graph` for the whole topology._\n", strings.ToLower(title[:1])+title[1:], n)
		return nil
	}
	var buf bytes.Buffer
	if err := topology.WriteMermaid(&buf, g); err != nil {
		return err
	}
	fmt.Fprintf(bw, "<details open><summary>%s</summary>\n\n", escapeSummary(title))
	writeFence(bw, "mermaid", buf.String())
	bw.WriteString("\n</details>\n")
	return nil
}

// escapeSummary makes s plain text inside an HTML <summary>.
func escapeSummary(s string) string { return html.EscapeString(s) }
