package topology

import (
	"strconv"
	"strings"
)

// node is one box to draw, with the short name every output uses for it.
type node struct {
	short string
	id    string
	// svgID names the node in an SVG: its object's ID, or for a route
	// drawn under two sources in a graph of changes, its key.
	svgID string
	kind  string
	// lines are the box's text: a small kind line, the name, and for a
	// Trigger its filter.
	kindLine, name, detail string
	shape                  shape
	status                 Status
	external               bool
}

type shape int

const (
	shapeSource shape = iota
	shapeRoute
	shapeSink
	shapeURI
)

// group is a namespace, or the URIs outside every namespace.
type group struct {
	title string
	nodes []*node
	// clusters are the group's Brokers and Channels, each followed by its
	// Triggers or Subscriptions; loose are the other nodes.
	clusters [][]*node
	loose    []*node
	// outside is set for the URIs outside every namespace.
	outside bool
}

// edge is one arrow to draw.
type edge struct {
	from, to *node
	label    string
	role     Role
	status   Status
}

// flat lists what to draw: groups of nodes with short names n0, n1, … in
// a fixed order, and the edges between them.
type flat struct {
	groups []*group
	byID   map[string]*node
	edges  []*edge
}

// maxDetail bounds a filter's length in a box; the whole filter is kept in
// the node's tooltip.
const maxDetail = 48

func flatten(g *Graph) *flat {
	f := &flat{byID: map[string]*node{}}
	count := 0
	svgIDs := map[string]bool{}
	add := func(gr *group, n *node) {
		n.short = "n" + strconv.Itoa(count)
		count++
		if n.svgID == "" || svgIDs[n.svgID] {
			n.svgID = n.id
		}
		svgIDs[n.svgID] = true
		f.byID[n.id] = n
		gr.nodes = append(gr.nodes, n)
		switch n.shape {
		case shapeSource:
			gr.clusters = append(gr.clusters, []*node{n})
		case shapeRoute:
			last := len(gr.clusters) - 1
			gr.clusters[last] = append(gr.clusters[last], n)
		default:
			gr.loose = append(gr.loose, n)
		}
	}
	for _, ns := range g.Namespaces {
		gr := &group{title: "namespace " + ns.Name}
		for _, s := range ns.Sources {
			kindLine := s.Kind
			if s.Class != "" {
				kindLine += " · " + s.Class
			}
			if s.External {
				kindLine += " · external"
			}
			add(gr, &node{id: s.ID, kind: s.Kind, kindLine: kindLine, name: s.Name, shape: shapeSource, status: s.Status, external: s.External})
			for _, r := range s.Routes {
				add(gr, &node{id: routeKey(s, r), svgID: r.ID, kind: r.Kind, kindLine: r.Kind, name: r.Name, detail: r.Filter, shape: shapeRoute, status: r.Status})
			}
		}
		for _, s := range ns.Sinks {
			add(gr, &node{id: s.ID, kind: s.Kind, kindLine: s.Kind, name: s.Name, shape: shapeSink, status: s.Status})
		}
		f.groups = append(f.groups, gr)
	}
	if len(g.Outside) > 0 {
		gr := &group{title: "by URI", outside: true}
		for _, s := range g.Outside {
			add(gr, &node{id: s.ID, kind: KindURI, kindLine: "URI", name: s.URI, shape: shapeURI, status: s.Status})
		}
		f.groups = append(f.groups, gr)
	}
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			from := f.byID[s.ID]
			for _, e := range s.Edges {
				f.addEdge(from, e)
			}
			for _, r := range s.Routes {
				rn := f.byID[routeKey(s, r)]
				status := r.Status
				if status == Changed {
					status = Unchanged
				}
				f.edges = append(f.edges, &edge{from: from, to: rn, status: status})
				for _, e := range r.Edges {
					f.addEdge(rn, e)
				}
			}
		}
	}
	return f
}

// ShortNames returns, by ID, the short name (n0, n1, …) each node has in
// g's drawings: the DOT node name, which an SVG gives as the <title> of
// the node's box.
func ShortNames(g *Graph) map[string]string {
	f := flatten(g)
	m := make(map[string]string, len(f.byID))
	for _, n := range f.byID {
		m[n.svgID] = n.short
	}
	return m
}

func (f *flat) addEdge(from *node, e *Edge) {
	to := f.byID[e.To]
	if to == nil {
		return
	}
	var label []string
	if e.Role != Subscriber {
		label = append(label, string(e.Role))
	}
	if e.Path != "" {
		label = append(label, e.Path)
	}
	f.edges = append(f.edges, &edge{from: from, to: to, label: strings.Join(label, " "), role: e.Role, status: e.Status})
}

// routeKey names a route's node: a Trigger moved to another Broker is
// drawn twice in a graph of changes, once under each.
func routeKey(s *Source, r *Route) string { return s.ID + " " + r.ID }

// shortDetail cuts a filter to fit in a box.
func shortDetail(s string) string {
	r := []rune(s)
	if len(r) <= maxDetail {
		return s
	}
	return string(r[:maxDetail-1]) + "…"
}
