package topology

import (
	"bufio"
	"io"
	"strconv"
	"strings"
)

// The colours of edges by role, so that a reply or a dead letter can be
// told from a subscriber at a glance, also when printed in grey.
const (
	colourSubscriber = "#24292f"
	colourRoute      = "#8c959f"
	colourReply      = "#0969da"
	colourDeadLetter = "#bc4c00"
	// fontFamily is a family whose metrics Graphviz knows without a font
	// library: it sizes every box from them. Verdana is among the widest
	// sans-serif faces, so that text fits its box in whichever font the
	// viewer substitutes (svgFontFamily).
	fontFamily = "Verdana"
)

// largeGraph is the number of nodes above which dot is asked to spend less
// time on crossings, so that a thousand Triggers are laid out in a second.
const largeGraph = 400

// WriteDOT writes g as a Graphviz digraph, left to right: a cluster per
// namespace holding a cluster per Broker or Channel with its Triggers or
// Subscriptions, and a legend of the edge styles. Edge labels are placed
// by dot as nodes of their own, so that they never cover a box.
func WriteDOT(w io.Writer, g *Graph) error {
	f := flatten(g)
	bw := bufio.NewWriter(w)
	bw.WriteString("digraph knc {\n")
	bw.WriteString("  graph [rankdir=LR, newrank=true, splines=true, nodesep=0.25, ranksep=0.6, pad=0.2, fontname=\"" + fontFamily + "\", fontsize=12, labeljust=l")
	if len(f.byID) > largeGraph {
		// Crossing minimisation takes most of dot's time, and more than
		// the square of the nodes: a large graph gets fewer passes.
		bw.WriteString(", mclimit=0.1, remincross=false")
	}
	bw.WriteString("];\n")
	bw.WriteString("  node [fontname=\"" + fontFamily + "\", fontsize=11, style=\"filled\", fillcolor=\"#ffffff\", margin=\"0.2,0.08\"];\n")
	bw.WriteString("  edge [fontname=\"" + fontFamily + "\", fontsize=10, arrowsize=0.7];\n")
	for i, gr := range f.groups {
		if gr.outside {
			// Their arrow shape says they are URIs. A box with a title
			// would be crossed by the edges that come in from above.
			for _, n := range gr.loose {
				bw.WriteString("  " + n.short + " [" + dotNodeAttrs(n) + "];\n")
			}
			continue
		}
		prefix := "cluster_" + strconv.Itoa(i)
		bw.WriteString("  subgraph " + prefix + " {\n")
		bw.WriteString("    label=" + dotString(gr.title) + ";\n")
		bw.WriteString("    style=\"rounded\";\n    color=\"#8c959f\";\n")
		for j, c := range gr.clusters {
			bw.WriteString("    subgraph " + prefix + "_" + strconv.Itoa(j) + " {\n")
			bw.WriteString("      label=\"\";\n      style=\"rounded,filled\";\n      color=\"#d0d7de\";\n      fillcolor=\"#f6f8fa\";\n")
			for _, n := range c {
				bw.WriteString("      " + n.short + " [" + dotNodeAttrs(n) + "];\n")
			}
			bw.WriteString("    }\n")
		}
		for _, n := range gr.loose {
			bw.WriteString("    " + n.short + " [" + dotNodeAttrs(n) + "];\n")
		}
		bw.WriteString("  }\n")
	}
	for _, e := range f.edges {
		bw.WriteString("  " + e.from.short + " -> " + e.to.short + " [" + strings.Join(dotEdgeAttrs(e), ", ") + "];\n")
	}
	if !g.Empty() {
		writeLegend(bw)
	}
	bw.WriteString("}\n")
	return bw.Flush()
}

// dotEdgeAttrs styles an edge by its role, then colours it by status in a
// graph of changes.
func dotEdgeAttrs(e *edge) []string {
	var attrs []string
	if e.label != "" {
		attrs = append(attrs, "label="+dotString(e.label))
	}
	colour := colourSubscriber
	switch {
	case e.role == "":
		colour = colourRoute
	case e.role == DeadLetter:
		colour = colourDeadLetter
		attrs = append(attrs, "style=dashed")
	case e.role == Reply:
		// A reply runs back to a Broker or Channel drawn on the left; it
		// must not pull that source to the right of its own routes.
		colour = colourReply
		attrs = append(attrs, "style=bold", "constraint=false")
	}
	if e.status == Removed && e.role != DeadLetter {
		attrs = append(attrs, "style=dashed")
	}
	if c := statusColor(e.status); c != "" {
		colour = c
		attrs = append(attrs, "penwidth=2")
	}
	attrs = append(attrs, "color="+dotString(colour))
	if e.label != "" {
		attrs = append(attrs, "fontcolor="+dotString(colour))
	}
	return attrs
}

// writeLegend draws a box naming the colour and stroke of each role. It is
// one node, not sample edges, so that it takes no room in the ranks of the
// topology.
func writeLegend(bw *bufio.Writer) {
	bw.WriteString("  legend [shape=box, style=\"rounded\", color=\"#d0d7de\", fontsize=10, label=<")
	bw.WriteString("<table border=\"0\" cellborder=\"0\" cellspacing=\"1\" cellpadding=\"1\">")
	for _, row := range []struct {
		stroke, colour string
		role           Role
	}{
		{"———", colourSubscriber, Subscriber},
		{"———", colourReply, Reply},
		{"– – –", colourDeadLetter, DeadLetter},
	} {
		bw.WriteString("<tr><td><font color=\"" + row.colour + "\">" + row.stroke + "</font></td><td align=\"left\">" + string(row.role) + "</td></tr>")
	}
	bw.WriteString("</table>>];\n")
}

func dotNodeAttrs(n *node) string {
	label := n.kindLine + "\n" + n.name
	if n.detail != "" {
		label += "\n" + shortDetail(n.detail)
	}
	attrs := []string{"id=" + dotString(n.svgID), "label=" + dotString(label)}
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
