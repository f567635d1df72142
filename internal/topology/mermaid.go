package topology

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteMermaid writes g as a Mermaid flowchart, which GitHub and GitLab
// draw in Markdown inside a ```mermaid block. Parts of a changed graph are
// coloured by status: added green, removed red and dashed, changed yellow.
func WriteMermaid(w io.Writer, g *Graph) error {
	f := flatten(g)
	bw := bufio.NewWriter(w)
	bw.WriteString("flowchart LR\n")
	if g.Empty() {
		bw.WriteString("  empty[\"no Brokers or Channels\"]\n")
	}
	for i, gr := range f.groups {
		bw.WriteString("  subgraph g" + strconv.Itoa(i) + "[\"" + mermaidText(gr.title) + "\"]\n")
		bw.WriteString("    direction LR\n")
		for _, n := range gr.nodes {
			bw.WriteString("    " + n.short + mermaidShape(n) + "\n")
		}
		bw.WriteString("  end\n")
	}
	styles := map[Status][]string{}
	for i, e := range f.edges {
		arrow := " --> "
		if e.role == DeadLetter || e.status == Removed {
			arrow = " -.-> "
		}
		if e.label != "" {
			arrow = strings.TrimSuffix(arrow, " ") + "|\"" + mermaidText(e.label) + "\"| "
		}
		bw.WriteString("  " + e.from.short + arrow + e.to.short + "\n")
		if e.status != Unchanged {
			styles[e.status] = append(styles[e.status], strconv.Itoa(i))
		}
	}
	classes := map[string][]string{}
	for _, gr := range f.groups {
		for _, n := range gr.nodes {
			if n.status != Unchanged {
				classes[n.status.String()] = append(classes[n.status.String()], n.short)
			}
			if n.external {
				classes["external"] = append(classes["external"], n.short)
			}
		}
	}
	for _, c := range []struct {
		name  string
		style string
	}{
		{"added", "fill:#dafbe1,stroke:#1a7f37,color:#116329"},
		{"removed", "fill:#ffebe9,stroke:#cf222e,color:#a40e26,stroke-dasharray:5 3"},
		{"changed", "fill:#fff8c5,stroke:#9a6700,color:#7d4e00"},
		{"external", "stroke-dasharray:3 3"},
	} {
		if len(classes[c.name]) > 0 {
			bw.WriteString("  classDef " + c.name + " " + c.style + "\n")
			bw.WriteString("  class " + strings.Join(classes[c.name], ",") + " " + c.name + "\n")
		}
	}
	for _, s := range []struct {
		status Status
		style  string
	}{{Added, "stroke:#1a7f37,stroke-width:2px"}, {Removed, "stroke:#cf222e,stroke-width:2px"}} {
		if len(styles[s.status]) > 0 {
			bw.WriteString("  linkStyle " + strings.Join(styles[s.status], ",") + " " + s.style + "\n")
		}
	}
	return bw.Flush()
}

// mermaidShape writes a node's shape and label: sources as double-edged
// boxes, routes rounded, sinks plain, URIs as flags.
func mermaidShape(n *node) string {
	label := "<small>" + mermaidText(n.kindLine) + "</small><br/><b>" + mermaidText(n.name) + "</b>"
	if n.detail != "" {
		label += "<br/><code>" + mermaidText(shortDetail(n.detail)) + "</code>"
	}
	switch n.shape {
	case shapeSource:
		return "[[\"" + label + "\"]]"
	case shapeRoute:
		return "(\"" + label + "\")"
	case shapeURI:
		return ">\"" + label + "\"]"
	}
	return "[\"" + label + "\"]"
}

// mermaidText escapes text for a quoted Mermaid label, with Mermaid's
// entity codes: the label is HTML, and a quote would end it.
func mermaidText(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString("#quot;")
		case '<':
			b.WriteString("#lt;")
		case '>':
			b.WriteString("#gt;")
		case '&':
			b.WriteString("#amp;")
		case '#':
			b.WriteString("#35;")
		case '`':
			b.WriteString("#96;")
		case '|':
			b.WriteString("#124;")
		case '\n', '\r':
			b.WriteString(" ")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}
