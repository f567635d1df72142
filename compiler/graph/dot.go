package graph

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// WriteDOT writes g as a Graphviz digraph, left to right, with a cluster
// per namespace.
func WriteDOT(w io.Writer, g *Graph) error {
	f := flatten(g)
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph knc {\n")
	bw.WriteString("  rankdir=LR;\n")
	bw.WriteString("  node [fontname=\"Helvetica,Arial,sans-serif\", fontsize=11, style=\"filled\", fillcolor=\"#ffffff\"];\n")
	bw.WriteString("  edge [fontname=\"Helvetica,Arial,sans-serif\", fontsize=10];\n")
	for i, gr := range f.groups {
		bw.WriteString("  subgraph cluster_" + strconv.Itoa(i) + " {\n")
		bw.WriteString("    label=" + dotString(gr.title) + ";\n")
		bw.WriteString("    style=\"rounded\";\n    color=\"#8c959f\";\n")
		for _, n := range gr.nodes {
			bw.WriteString("    " + n.short + " [" + dotNodeAttrs(n) + "];\n")
		}
		bw.WriteString("  }\n")
	}
	for _, e := range f.edges {
		var attrs []string
		if e.label != "" {
			attrs = append(attrs, "label="+dotString(e.label))
		}
		switch {
		case e.role == DeadLetter || e.status == Removed:
			attrs = append(attrs, "style=dashed")
		case e.role == Reply:
			attrs = append(attrs, "constraint=false")
		}
		if c := statusColor(e.status); c != "" {
			attrs = append(attrs, "color="+dotString(c), "penwidth=2")
		}
		line := "  " + e.from.short + " -> " + e.to.short
		if len(attrs) > 0 {
			line += " [" + strings.Join(attrs, ", ") + "]"
		}
		bw.WriteString(line + ";\n")
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

func dotNodeAttrs(n *node) string {
	label := n.kindLine + "\n" + n.name
	if n.detail != "" {
		label += "\n" + shortDetail(n.detail)
	}
	attrs := []string{"label=" + dotString(label)}
	var style []string
	switch n.shape {
	case shapeSource:
		attrs = append(attrs, "shape=box", "peripheries=2")
		style = append(style, "filled", "bold")
	case shapeRoute:
		attrs = append(attrs, "shape=box")
		style = append(style, "filled", "rounded")
	case shapeURI:
		attrs = append(attrs, "shape=cds")
		style = append(style, "filled")
	default:
		attrs = append(attrs, "shape=box")
		style = append(style, "filled")
	}
	if n.external || n.status == Removed {
		style = append(style, "dashed")
	}
	attrs = append(attrs, "style="+dotString(strings.Join(style, ",")))
	if c := statusColor(n.status); c != "" {
		attrs = append(attrs, "color="+dotString(c), "fillcolor="+dotString(statusFill(n.status)))
	} else if n.shape == shapeSource {
		attrs = append(attrs, "fillcolor=\"#ddf4ff\"")
	}
	if n.detail != "" {
		attrs = append(attrs, "tooltip="+dotString(n.detail))
	}
	return strings.Join(attrs, ", ")
}

func statusColor(s Status) string {
	switch s {
	case Added:
		return "#1a7f37"
	case Removed:
		return "#cf222e"
	case Changed:
		return "#9a6700"
	}
	return ""
}

func statusFill(s Status) string {
	switch s {
	case Added:
		return "#dafbe1"
	case Removed:
		return "#ffebe9"
	case Changed:
		return "#fff8c5"
	}
	return "#ffffff"
}

// dotString quotes s as a DOT string; a newline becomes \n, which DOT
// draws as a centred line break.
func dotString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
