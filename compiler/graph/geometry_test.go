package graph_test

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// rect is an axis-aligned box in the SVG's user space.
type rect struct{ x0, y0, x1, y1 float64 }

func (r rect) String() string {
	return fmt.Sprintf("[%.1f,%.1f %.1fx%.1f]", r.x0, r.y0, r.x1-r.x0, r.y1-r.y0)
}

// overlaps reports whether two boxes share more than a sliver: Graphviz
// rounds coordinates to two decimals, so boxes that touch may meet.
func (r rect) overlaps(o rect) bool {
	const slack = 0.5
	return r.x0+slack < o.x1 && o.x0+slack < r.x1 && r.y0+slack < o.y1 && o.y0+slack < r.y1
}

func (r rect) union(o rect) rect {
	return rect{min(r.x0, o.x0), min(r.y0, o.y0), max(r.x1, o.x1), max(r.y1, o.y1)}
}

func emptyRect() rect { return rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)} }

func (r rect) empty() bool { return r.x0 > r.x1 }

// drawnText is a line of text with the box it is estimated to cover.
type drawnText struct {
	text string
	box  rect
}

// drawnNode is a node as drawn: its outline and its lines of text.
type drawnNode struct {
	id string
	// title is the node's name in the DOT, which edge titles use.
	title string
	box   rect
	texts []string
}

// drawnEdge is an edge as drawn.
type drawnEdge struct {
	title  string
	paths  int
	arrows int
	labels []drawnText
	// points are samples of the edge's curves.
	points [][2]float64
}

// drawing is what a Graphviz SVG shows, read back from its elements.
type drawing struct {
	viewBox       rect
	nodes         []drawnNode
	edges         []drawnEdge
	clusterTitles []drawnText
}

// textWidthPerEm over-estimates the advance of an average character of a
// sans-serif font in ems, so that a label judged clear of a box is clear
// in any browser's font.
const textWidthPerEm = 0.6

// textBox estimates the box of an SVG <text>: from its font size, its
// anchor and its baseline, which sits about four fifths of the way down.
func textBox(s string, x, y, size float64, anchor string) rect {
	w := float64(utf8.RuneCountInString(s)) * size * textWidthPerEm
	x0 := x
	switch anchor {
	case "middle":
		x0 = x - w/2
	case "end":
		x0 = x - w
	}
	return rect{x0, y - size*0.8, x0 + w, y + size*0.2}
}

var numberPattern = regexp.MustCompile(`-?[0-9]*\.?[0-9]+(?:e-?[0-9]+)?`)

// pointsBox bounds a list of coordinates: a polygon's points or a path's
// data, whose control points lie around the curve.
func pointsBox(list string) rect {
	nums := numberPattern.FindAllString(list, -1)
	r := emptyRect()
	for i := 0; i+1 < len(nums); i += 2 {
		x, _ := strconv.ParseFloat(nums[i], 64)
		y, _ := strconv.ParseFloat(nums[i+1], 64)
		r = r.union(rect{x, y, x, y})
	}
	return r
}

// parseDrawing reads a Graphviz SVG with encoding/xml.
func parseDrawing(t *testing.T, svg []byte) *drawing {
	t.Helper()
	d := &drawing{}
	attr := func(e xml.StartElement, name string) string {
		for _, a := range e.Attr {
			if a.Name.Local == name {
				return a.Value
			}
		}
		return ""
	}
	number := func(e xml.StartElement, name string) float64 {
		v, err := strconv.ParseFloat(attr(e, name), 64)
		if err != nil {
			t.Fatalf("<%s %s=%q>: %v", e.Name.Local, name, attr(e, name), err)
		}
		return v
	}
	var (
		stack []xml.StartElement
		// class is that of the innermost node, edge or cluster group;
		// groups is the class of each open group.
		class   string
		groups  []string
		node    *drawnNode
		edge    *drawnEdge
		cluster bool
		root    bool
		// The graph group maps its coordinates into the image's.
		scale     = 1.0
		translate [2]float64
	)
	place := func(r rect) rect {
		return rect{scale * (r.x0 + translate[0]), scale * (r.y0 + translate[1]), scale * (r.x1 + translate[0]), scale * (r.y1 + translate[1])}
	}
	dec := xml.NewDecoder(bytes.NewReader(svg))
	// The DOCTYPE names a DTD, which is not fetched.
	dec.Strict = true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			tok = tok.Copy()
			stack = append(stack, tok)
			if !root {
				root = true
				if tok.Name.Space != "http://www.w3.org/2000/svg" || tok.Name.Local != "svg" {
					t.Fatalf("root element is %v, want svg in the SVG namespace", tok.Name)
				}
				vb := strings.Fields(attr(tok, "viewBox"))
				if len(vb) != 4 {
					t.Fatalf("root has no viewBox: %v", tok.Attr)
				}
				var v [4]float64
				for i := range vb {
					v[i], _ = strconv.ParseFloat(vb[i], 64)
				}
				d.viewBox = rect{v[0], v[1], v[0] + v[2], v[1] + v[3]}
				continue
			}
			switch tok.Name.Local {
			case "g":
				c := attr(tok, "class")
				groups = append(groups, c)
				if c == "graph" {
					scale, translate = parseTransform(t, attr(tok, "transform"))
				}
				if c == "" {
					continue
				}
				switch class = c; class {
				case "node":
					d.nodes = append(d.nodes, drawnNode{id: attr(tok, "id"), box: emptyRect()})
					node = &d.nodes[len(d.nodes)-1]
				case "edge":
					d.edges = append(d.edges, drawnEdge{})
					edge = &d.edges[len(d.edges)-1]
				case "cluster":
					cluster = true
				}
			case "polygon", "ellipse", "path", "polyline":
				var r rect
				switch tok.Name.Local {
				case "polygon", "polyline":
					r = pointsBox(attr(tok, "points"))
				case "path":
					r = pointsBox(attr(tok, "d"))
				case "ellipse":
					cx, cy, rx, ry := number(tok, "cx"), number(tok, "cy"), number(tok, "rx"), number(tok, "ry")
					r = rect{cx - rx, cy - ry, cx + rx, cy + ry}
				}
				switch class {
				case "node":
					node.box = node.box.union(place(r))
				case "edge":
					if tok.Name.Local == "path" {
						edge.paths++
						for _, pt := range sampleCurve(attr(tok, "d")) {
							r := place(rect{pt[0], pt[1], pt[0], pt[1]})
							edge.points = append(edge.points, [2]float64{r.x0, r.y0})
						}
					} else {
						edge.arrows++
					}
				}
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if tok.Name.Local == "g" {
				if groups[len(groups)-1] != "" {
					class, node, edge, cluster = "", nil, nil, false
				}
				groups = groups[:len(groups)-1]
			}
		case xml.CharData:
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			switch top.Name.Local {
			case "title":
				switch {
				case edge != nil:
					edge.title = string(tok)
				case node != nil:
					node.title = string(tok)
				}
			case "text":
				s := string(tok)
				box := place(textBox(s, number(top, "x"), number(top, "y"), number(top, "font-size"), attr(top, "text-anchor")))
				switch {
				case node != nil:
					node.texts = append(node.texts, s)
				case edge != nil:
					edge.labels = append(edge.labels, drawnText{s, box})
				case cluster:
					d.clusterTitles = append(d.clusterTitles, drawnText{s, box})
				}
			}
		}
	}
	if !root {
		t.Fatal("the SVG has no root element")
	}
	return d
}

// checkSVG draws g as SVG and checks what a reader needs: a box for every
// node, holding its name, inside the image; an edge with an arrowhead for
// every delivery; and no two node boxes, edge labels or namespace titles
// on top of one another.
func checkSVG(t *testing.T, g *topology.Graph) *drawing {
	t.Helper()
	var buf bytes.Buffer
	if err := layout.WriteSVG(&buf, g); err != nil {
		t.Fatal(err)
	}
	d := parseDrawing(t, buf.Bytes())

	var wantNames []string
	nodes, edges := 0, 0
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			nodes++
			wantNames = append(wantNames, s.Name)
			edges += len(s.Edges)
			for _, r := range s.Routes {
				nodes++
				edges += 1 + len(r.Edges)
				wantNames = append(wantNames, r.Name)
			}
		}
		for _, s := range ns.Sinks {
			nodes++
			wantNames = append(wantNames, s.Label())
		}
	}
	for _, s := range g.Outside {
		nodes++
		wantNames = append(wantNames, s.Label())
	}
	if !g.Empty() {
		nodes++ // the legend
	}
	if len(d.nodes) != nodes {
		t.Errorf("SVG has %d nodes, want %d", len(d.nodes), nodes)
	}
	if len(d.edges) != edges {
		t.Errorf("SVG has %d edges, want %d", len(d.edges), edges)
	}
	texts := map[string]bool{}
	ids := map[string]bool{}
	for _, n := range d.nodes {
		if n.box.empty() {
			t.Errorf("node %s has no outline", n.id)
		}
		if ids[n.id] {
			t.Errorf("two nodes have the id %q", n.id)
		}
		ids[n.id] = true
		for _, s := range n.texts {
			texts[s] = true
		}
	}
	for _, n := range wantNames {
		if !texts[n] {
			t.Errorf("no node is named %q", n)
		}
	}
	for _, e := range d.edges {
		if e.paths == 0 || e.arrows == 0 {
			t.Errorf("edge %s has %d paths and %d arrowheads, want one or more of each", e.title, e.paths, e.arrows)
		}
	}
	for _, p := range overlaps(d) {
		t.Error(p)
	}
	return d
}

// overlaps lists node boxes outside the image or overlapping each other,
// and edge labels or cluster titles that overlap a node box or each other.
func overlaps(d *drawing) []string {
	var problems []string
	errorf := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	for i, a := range d.nodes {
		if a.box.union(d.viewBox) != d.viewBox {
			errorf("node %s %v lies outside the image %v", a.id, a.box, d.viewBox)
		}
		for _, b := range d.nodes[i+1:] {
			if a.box.overlaps(b.box) {
				errorf("nodes %s %v and %s %v overlap", a.id, a.box, b.id, b.box)
			}
		}
	}
	type label struct {
		owner string
		drawnText
	}
	var labels []label
	for _, e := range d.edges {
		for _, l := range e.labels {
			labels = append(labels, label{"edge " + e.title, l})
		}
	}
	for _, l := range d.clusterTitles {
		labels = append(labels, label{"cluster title", l})
	}
	// An edge is traceable when it runs through no box but those of its
	// own ends, and under no title.
	byTitle := map[string]drawnNode{}
	for _, n := range d.nodes {
		byTitle[n.title] = n
	}
	for _, e := range d.edges {
		from, to, _ := strings.Cut(e.title, "->")
		for _, n := range d.nodes {
			if n.title == from || n.title == to {
				continue
			}
			if pt, ok := crosses(e.points, n.box); ok {
				errorf("edge %s runs through node %s %v at %.1f,%.1f", e.title, n.id, n.box, pt[0], pt[1])
			}
		}
		for _, l := range d.clusterTitles {
			if pt, ok := crosses(e.points, l.box); ok {
				errorf("edge %s runs through the title %q %v at %.1f,%.1f", e.title, l.text, l.box, pt[0], pt[1])
			}
		}
	}
	for i, l := range labels {
		for _, n := range d.nodes {
			if l.box.overlaps(n.box) {
				errorf("label %q of %s %v overlaps node %s %v", l.text, l.owner, l.box, n.id, n.box)
			}
		}
		for _, o := range labels[i+1:] {
			if l.box.overlaps(o.box) {
				errorf("label %q of %s %v overlaps label %q of %s %v", l.text, l.owner, l.box, o.text, o.owner, o.box)
			}
		}
	}
	return problems
}

// crosses returns a point that lies inside r, by more than a sliver.
func crosses(points [][2]float64, r rect) ([2]float64, bool) {
	const slack = 1
	for _, p := range points {
		if p[0] > r.x0+slack && p[0] < r.x1-slack && p[1] > r.y0+slack && p[1] < r.y1-slack {
			return p, true
		}
	}
	return [2]float64{}, false
}

// sampleCurve samples the cubic Bézier curves of Graphviz's edge path
// data, "Mx,yCx1,y1 x2,y2 x3,y3 …", at twenty points each.
func sampleCurve(d string) [][2]float64 {
	nums := numberPattern.FindAllString(d, -1)
	var pts [][2]float64
	for i := 0; i+1 < len(nums); i += 2 {
		x, _ := strconv.ParseFloat(nums[i], 64)
		y, _ := strconv.ParseFloat(nums[i+1], 64)
		pts = append(pts, [2]float64{x, y})
	}
	var out [][2]float64
	for i := 0; i+3 < len(pts); i += 3 {
		p0, p1, p2, p3 := pts[i], pts[i+1], pts[i+2], pts[i+3]
		for s := 0; s <= 20; s++ {
			t := float64(s) / 20
			u := 1 - t
			a, b, c, e := u*u*u, 3*u*u*t, 3*u*t*t, t*t*t
			out = append(out, [2]float64{a*p0[0] + b*p1[0] + c*p2[0] + e*p3[0], a*p0[1] + b*p1[1] + c*p2[1] + e*p3[1]})
		}
	}
	return out
}

var transformPattern = regexp.MustCompile(`^scale\(([0-9.]+) ([0-9.]+)\) rotate\(0\) translate\((-?[0-9.]+) (-?[0-9.]+)\)$`)

// parseTransform reads the transform Graphviz gives its graph group: a
// uniform scale, no rotation and a translation.
func parseTransform(t *testing.T, s string) (scale float64, translate [2]float64) {
	t.Helper()
	m := transformPattern.FindStringSubmatch(s)
	if m == nil || m[1] != m[2] {
		t.Fatalf("graph transform %q is not a uniform scale and a translation", s)
	}
	scale, _ = strconv.ParseFloat(m[1], 64)
	translate[0], _ = strconv.ParseFloat(m[3], 64)
	translate[1], _ = strconv.ParseFloat(m[4], 64)
	return scale, translate
}

// TestOverlapsFound shows that the geometry check sees what it looks for,
// on a drawing in Graphviz's form: two nodes on top of one another, an edge
// through a node, an edge label across a node, and a cluster title under
// an edge label.
func TestOverlapsFound(t *testing.T) {
	svg := `<svg viewBox="0.00 0.00 300.00 200.00" xmlns="http://www.w3.org/2000/svg">
<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 196)">
<g id="clust1" class="cluster"><title>cluster_0</title>
<polygon points="0,0 0,-190 290,-190 290,0 0,0"/>
<text text-anchor="middle" x="60" y="-170" font-size="12.00">namespace shop</text>
</g>
<g id="Broker/shop/a" class="node"><title>n0</title>
<polygon points="10,-10 10,-50 90,-50 90,-10 10,-10"/>
<text text-anchor="middle" x="50" y="-25" font-size="11.00">a</text>
</g>
<g id="Broker/shop/b" class="node"><title>n1</title>
<path d="M60,-30C60,-30 140,-30 140,-30 140,-70 60,-70 60,-30"/>
<text text-anchor="middle" x="100" y="-45" font-size="11.00">b</text>
</g>
<g id="Service/shop/c" class="node"><title>n2</title>
<ellipse cx="220" cy="-100" rx="30" ry="15"/>
<text text-anchor="middle" x="220" y="-96" font-size="11.00">c</text>
</g>
<g id="edge1" class="edge"><title>n0&#45;&gt;n2</title>
<path d="M90,-30C150,-60 180,-90 190,-100"/>
<polygon points="190,-104 198,-100 190,-96 190,-104"/>
<text text-anchor="start" x="180" y="-98" font-size="10.00">dead letter</text>
<text text-anchor="end" x="110" y="-168" font-size="10.00">/hooks</text>
</g>
</g>
</svg>`
	got := overlaps(parseDrawing(t, []byte(svg)))
	want := []string{
		"nodes Broker/shop/a [14.0,146.0 80.0x40.0] and Broker/shop/b [64.0,126.0 80.0x40.0] overlap",
		"edge n0->n2 runs through node Broker/shop/b [64.0,126.0 80.0x40.0] at 102.8,161.5",
		`label "dead letter" of edge n0->n2 [184.0,90.0 66.0x10.0] overlaps node Service/shop/c [194.0,81.0 60.0x30.0]`,
		`label "/hooks" of edge n0->n2 [78.0,20.0 36.0x10.0] overlaps label "namespace shop" of cluster title [13.6,16.4 100.8x12.0]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
