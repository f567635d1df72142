package graph

import (
	"bufio"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
)

// Layout of the SVG drawing, in pixels. Text widths are estimated from the
// number of characters, generously, so that text stays inside its box in
// any sans-serif font.
const (
	svgMargin     = 40.0 // room for edges that loop back on the left
	svgColumnGap  = 90.0
	svgGroupPad   = 16.0
	svgGroupTitle = 24.0
	svgNodeGap    = 12.0
	svgSourceGap  = 24.0
	svgGroupGap   = 20.0
	svgPadX       = 10.0
	svgMinWidth   = 120.0
	svgMaxWidth   = 340.0
	svgLine       = 15.0
	svgNodePadY   = 8.0

	nameCharWidth   = 7.2 // bold 12px
	kindCharWidth   = 6.0 // 10px
	detailCharWidth = 6.1 // 10px monospace
)

// placedNode is a node with its box.
type placedNode struct {
	*node
	column     int
	x, y, w, h float64
	kind, name string
	detail     string
	title      string
	// placed is set once the node has its position.
	placed bool
	// laneY is, for a source, the height of the free lane under its
	// Triggers or Subscriptions, where its own edges to the destinations
	// column pass instead of behind their boxes.
	laneY float64
}

func (p *placedNode) centreY() float64 { return p.y + p.h/2 }

// WriteSVG writes g as a standalone SVG 1.1 image, laid out in three
// columns, left to right: Brokers and Channels, their Triggers and
// Subscriptions, and the destinations; one band per namespace.
func WriteSVG(w io.Writer, g *Graph) error {
	f := flatten(g)
	l := layout(f)
	bw := bufio.NewWriter(w)
	l.write(bw, f)
	return bw.Flush()
}

type svgLayout struct {
	width, height float64
	columnX       [3]float64
	columnW       [3]float64
	nodes         map[*node]*placedNode
	bands         []band
}

type band struct {
	title      string
	x, y, w, h float64
	placed     []*placedNode
}

func columnOf(n *node) int {
	switch n.shape {
	case shapeSource:
		return 0
	case shapeRoute:
		return 1
	}
	return 2
}

func layout(f *flat) *svgLayout {
	l := &svgLayout{nodes: map[*node]*placedNode{}}
	// Column widths from the widest text, within bounds.
	var all []*placedNode
	for _, gr := range f.groups {
		for _, n := range gr.nodes {
			p := &placedNode{node: n, column: columnOf(n), kind: n.kindLine, name: n.name, detail: shortDetail(n.detail)}
			p.title = n.kindLine + " " + n.name
			if n.detail != "" {
				p.title += ": " + n.detail
			}
			want := max(float64(len([]rune(p.name)))*nameCharWidth, float64(len([]rune(p.kind)))*kindCharWidth, float64(len([]rune(p.detail)))*detailCharWidth) + 2*svgPadX
			l.columnW[p.column] = max(l.columnW[p.column], min(max(want, svgMinWidth), svgMaxWidth))
			l.nodes[n] = p
			all = append(all, p)
		}
	}
	for i := range l.columnW {
		l.columnW[i] = max(l.columnW[i], svgMinWidth)
	}
	for _, p := range all {
		p.w = l.columnW[p.column]
		inner := p.w - 2*svgPadX
		p.name = fit(p.name, inner, nameCharWidth)
		p.kind = fit(p.kind, inner, kindCharWidth)
		p.detail = fit(p.detail, inner, detailCharWidth)
		lines := 2.0
		if p.detail != "" {
			lines = 3
		}
		p.h = lines*svgLine + 2*svgNodePadY
	}
	left := svgMargin + svgGroupPad
	l.columnX[0] = left
	l.columnX[1] = l.columnX[0] + l.columnW[0] + svgColumnGap
	l.columnX[2] = l.columnX[1] + l.columnW[1] + svgColumnGap
	bandW := l.columnX[2] + l.columnW[2] + svgGroupPad - svgMargin
	for _, p := range all {
		p.x = l.columnX[p.column]
	}

	// Where edges come from, to place each destination next to them.
	incoming := map[*node][]*node{}
	for _, e := range f.edges {
		incoming[e.to] = append(incoming[e.to], e.from)
	}

	y := svgMargin
	for _, gr := range f.groups {
		b := band{title: gr.title, x: svgMargin, y: y, w: bandW}
		top := y + svgGroupTitle + svgGroupPad/2
		cursor := top
		var sinks []*placedNode
		var current *placedNode
		var routes []*placedNode
		flush := func() {
			if current == nil {
				return
			}
			routesH := 0.0
			for i, r := range routes {
				if i > 0 {
					routesH += svgNodeGap
				}
				routesH += r.h
			}
			blockH := max(current.h, routesH)
			current.y = cursor + (blockH-current.h)/2
			current.placed = true
			ry := cursor + (blockH-routesH)/2
			for _, r := range routes {
				r.y, r.placed = ry, true
				ry += r.h + svgNodeGap
			}
			current.laneY = cursor + blockH + svgSourceGap/2
			cursor += blockH + svgSourceGap
			current, routes = nil, nil
		}
		for _, n := range gr.nodes {
			p := l.nodes[n]
			b.placed = append(b.placed, p)
			switch p.column {
			case 0:
				flush()
				current = p
			case 1:
				routes = append(routes, p)
			default:
				sinks = append(sinks, p)
			}
		}
		flush()
		bottom := cursor - svgSourceGap
		if len(sinks) > 0 {
			bottom = max(bottom, placeSinks(sinks, incoming, l, top))
		}
		b.h = bottom - y + svgGroupPad
		l.bands = append(l.bands, b)
		y += b.h + svgGroupGap
	}
	if len(f.groups) == 0 {
		l.bands = append(l.bands, band{title: "no Brokers or Channels", x: svgMargin, y: y, w: bandW, h: svgGroupTitle + svgGroupPad})
		y += svgGroupTitle + svgGroupPad + svgGroupGap
	}
	l.width = math.Ceil(svgMargin + bandW + svgMargin)
	l.height = math.Ceil(y - svgGroupGap + svgMargin)
	return l
}

// placeSinks stacks the destinations of a band in the third column, each
// as near as it can to the middle of the boxes its edges come from, so
// that edges run as straight as they can. It returns the bottom.
func placeSinks(sinks []*placedNode, incoming map[*node][]*node, l *svgLayout, top float64) float64 {
	want := make(map[*placedNode]float64, len(sinks))
	next := top
	for _, s := range sinks {
		sum, n := 0.0, 0
		for _, from := range incoming[s.node] {
			if p := l.nodes[from]; p != nil && p.placed {
				sum += p.centreY()
				n++
			}
		}
		if n == 0 {
			want[s] = next + s.h/2
		} else {
			want[s] = sum / float64(n)
		}
		next += s.h + svgNodeGap
	}
	order := slices.Clone(sinks)
	slices.SortStableFunc(order, func(a, b *placedNode) int {
		switch {
		case want[a] < want[b]:
			return -1
		case want[a] > want[b]:
			return 1
		}
		return 0
	})
	cursor := top
	for _, s := range order {
		s.y, s.placed = max(want[s]-s.h/2, cursor), true
		cursor = s.y + s.h + svgNodeGap
	}
	return cursor - svgNodeGap
}

// fit cuts text to the width available.
func fit(s string, width, charWidth float64) string {
	r := []rune(s)
	n := int(width / charWidth)
	if len(r) <= n || n < 2 {
		return s
	}
	return string(r[:n-1]) + "…"
}

const svgStyle = `
text { font-family: Helvetica, Arial, sans-serif; fill: #1f2328; }
.band { fill: #f6f8fa; stroke: #d0d7de; }
.band-title { font-size: 12px; font-weight: bold; fill: #57606a; }
.box { fill: #ffffff; stroke: #8c959f; stroke-width: 1.2; }
.source .box { fill: #ddf4ff; stroke: #0969da; stroke-width: 2; }
.sink .box { fill: #ffffff; stroke: #afb8c1; }
.external .box { stroke-dasharray: 4 3; }
.added .box { fill: #dafbe1; stroke: #1a7f37; }
.removed .box { fill: #ffebe9; stroke: #cf222e; stroke-dasharray: 5 3; }
.changed .box { fill: #fff8c5; stroke: #9a6700; }
.kind { font-size: 10px; fill: #57606a; }
.name { font-size: 12px; font-weight: bold; }
.detail { font-size: 10px; font-family: Menlo, Consolas, "DejaVu Sans Mono", monospace; fill: #0a3069; }
.edge { fill: none; stroke: #57606a; stroke-width: 1.4; }
.edge.reply { stroke: #0969da; }
.edge.dead-letter { stroke: #8250df; stroke-dasharray: 6 4; }
.edge.added { stroke: #1a7f37; stroke-width: 2; }
.edge.removed { stroke: #cf222e; stroke-width: 2; stroke-dasharray: 5 3; }
.edge-label { font-size: 10px; fill: #57606a; }
.edge-label-bg { fill: #ffffff; fill-opacity: 0.85; }
`

// arrowColours are the arrowheads, one per edge colour (SVG 1.1 markers
// cannot take the colour of the line they end).
var arrowColours = []struct{ id, colour string }{
	{"arrow", "#57606a"},
	{"arrow-reply", "#0969da"},
	{"arrow-dead-letter", "#8250df"},
	{"arrow-added", "#1a7f37"},
	{"arrow-removed", "#cf222e"},
}

func (l *svgLayout) write(w *bufio.Writer, f *flat) {
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8" standalone="no"?>
<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="%s" height="%s" viewBox="0 0 %s %s">
`, num(l.width), num(l.height), num(l.width), num(l.height))
	w.WriteString("<title>knc event topology</title>\n")
	w.WriteString("<defs>\n<style type=\"text/css\"><![CDATA[" + svgStyle + "]]></style>\n")
	for _, a := range arrowColours {
		fmt.Fprintf(w, `<marker id="%s" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>`+"\n", a.id, a.colour)
	}
	w.WriteString("</defs>\n")
	fmt.Fprintf(w, `<rect x="0" y="0" width="%s" height="%s" fill="#ffffff"/>`+"\n", num(l.width), num(l.height))
	for _, b := range l.bands {
		fmt.Fprintf(w, `<rect class="band" x="%s" y="%s" width="%s" height="%s" rx="10" ry="10"/>`+"\n", num(b.x), num(b.y), num(b.w), num(b.h))
		fmt.Fprintf(w, `<text class="band-title" x="%s" y="%s">%s</text>`+"\n", num(b.x+svgGroupPad), num(b.y+18), xmlText(b.title))
	}
	// Edges first, so that boxes cover where lines pass behind them.
	for _, e := range f.edges {
		l.writeEdge(w, e)
	}
	for _, b := range l.bands {
		for _, p := range b.placed {
			l.writeNode(w, p)
		}
	}
	w.WriteString("</svg>\n")
}

func (l *svgLayout) writeNode(w *bufio.Writer, p *placedNode) {
	classes := []string{"node", [...]string{"source", "route", "sink", "sink"}[p.shape]}
	if p.external {
		classes = append(classes, "external")
	}
	if p.status != Unchanged {
		classes = append(classes, p.status.String())
	}
	fmt.Fprintf(w, `<g id="%s" class="%s">`, p.short, strings.Join(classes, " "))
	fmt.Fprintf(w, `<title>%s</title>`, xmlText(p.title))
	rx := 4
	if p.shape == shapeRoute {
		rx = 12
	}
	fmt.Fprintf(w, `<rect class="box" x="%s" y="%s" width="%s" height="%s" rx="%d" ry="%d"/>`, num(p.x), num(p.y), num(p.w), num(p.h), rx, rx)
	tx := p.x + svgPadX
	ty := p.y + svgNodePadY + 11
	fmt.Fprintf(w, `<text class="kind" x="%s" y="%s">%s</text>`, num(tx), num(ty), xmlText(p.kind))
	fmt.Fprintf(w, `<text class="name" x="%s" y="%s">%s</text>`, num(tx), num(ty+svgLine), xmlText(p.name))
	if p.detail != "" {
		fmt.Fprintf(w, `<text class="detail" x="%s" y="%s">%s</text>`, num(tx), num(ty+2*svgLine), xmlText(p.detail))
	}
	w.WriteString("</g>\n")
}

func (l *svgLayout) writeEdge(w *bufio.Writer, e *edge) {
	from, to := l.nodes[e.from], l.nodes[e.to]
	if from == nil || to == nil {
		return
	}
	var d string
	var mx, my float64
	switch {
	case to.column == from.column+2:
		// Past the middle column: down into the lane below the source's
		// block, along it, and up or down into the destination.
		x0, y0 := from.x+from.w/2, from.y+from.h
		lane := from.laneY
		x2, y2 := to.x, to.centreY()
		turn := to.x - svgColumnGap/2
		d = fmt.Sprintf("M%s,%s C%s,%s %s,%s %s,%s L%s,%s C%s,%s %s,%s %s,%s",
			num(x0), num(y0), num(x0), num(lane), num(x0), num(lane), num(x0+16), num(lane),
			num(turn), num(lane), num(x2-16), num(lane), num(x2-svgColumnGap/2+16), num(y2), num(x2), num(y2))
		mx, my = (x0+turn)/2, lane
	case to.column > from.column:
		// Forward: right side to left side.
		x1, y1 := from.x+from.w, from.centreY()
		x2, y2 := to.x, to.centreY()
		dx := (x2 - x1) / 2
		d, mx, my = curve(x1, y1, x1+dx, y1, x2-dx, y2, x2, y2)
	case to.column < from.column:
		// Back to an earlier column (a reply to a Broker, a Trigger
		// delivering to a Broker of another namespace): leave on the left,
		// below where the arrow from the source arrives, and enter the
		// target from below or above, whichever faces the edge.
		x1, y1 := from.x, from.y+from.h*0.75
		x2 := to.x + to.w/2
		y2, bend := to.y+to.h, 40.0
		if to.centreY() <= from.centreY() {
			bend = max(bend, (y1-y2)/2)
		} else {
			y2 = to.y
			bend = -max(bend, (y2-y1)/2)
		}
		d, mx, my = curve(x1, y1, x1-svgColumnGap/2, y1, x2, y2+bend, x2, y2)
	default:
		// The same column: loop out on the left.
		x1, y1 := from.x, from.centreY()
		x2, y2 := to.x, to.centreY()
		d, mx, my = curve(x1, y1, x1-svgMargin+4, y1, x2-svgMargin+4, y2, x2, y2)
	}
	classes := []string{"edge"}
	marker := "arrow"
	switch e.role {
	case Reply:
		classes, marker = append(classes, "reply"), "arrow-reply"
	case DeadLetter:
		classes, marker = append(classes, "dead-letter"), "arrow-dead-letter"
	}
	switch e.status {
	case Added:
		classes, marker = append(classes, "added"), "arrow-added"
	case Removed:
		classes, marker = append(classes, "removed"), "arrow-removed"
	}
	fmt.Fprintf(w, `<path class="%s" d="%s" marker-end="url(#%s)"/>`+"\n", strings.Join(classes, " "), d, marker)
	if e.label == "" {
		return
	}
	// The label sits at the middle of the line, on a white ground.
	tw := float64(len([]rune(e.label)))*kindCharWidth + 6
	fmt.Fprintf(w, `<rect class="edge-label-bg" x="%s" y="%s" width="%s" height="14" rx="3" ry="3"/>`, num(mx-tw/2), num(my-10), num(tw))
	fmt.Fprintf(w, `<text class="edge-label" x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(mx), num(my+1), xmlText(e.label))
}

// curve returns a cubic Bézier path and its midpoint.
func curve(x1, y1, c1x, c1y, c2x, c2y, x2, y2 float64) (d string, mx, my float64) {
	d = fmt.Sprintf("M%s,%s C%s,%s %s,%s %s,%s", num(x1), num(y1), num(c1x), num(c1y), num(c2x), num(c2y), num(x2), num(y2))
	return d, (x1 + 3*c1x + 3*c2x + x2) / 8, (y1 + 3*c1y + 3*c2y + y2) / 8
}

// num writes a coordinate with at most one decimal.
func num(v float64) string {
	s := fmt.Sprintf("%.1f", v)
	return strings.TrimSuffix(s, ".0")
}

func xmlText(s string) string {
	var b strings.Builder
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}
