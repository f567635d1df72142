package topology

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"
)

// Selection picks the part of a graph to draw, so that a repository of a
// thousand Triggers can be looked at one piece at a time. Its parts narrow
// one another: the Brokers of the namespaces, then the neighbourhood of
// the focus among them.
type Selection struct {
	// Namespaces keeps the Brokers and Channels of these namespaces, with
	// their routes and whatever these deliver to.
	Namespaces []string
	// Brokers keeps these Brokers, each NAME or NAMESPACE/NAME, with their
	// Triggers and whatever these deliver to.
	Brokers []string
	// Focus is a node, KIND/NAMESPACE/NAME such as Trigger/shop/orders or
	// Service/shop/billing, whose neighbourhood is kept.
	Focus string
	// Depth is how many steps, along deliveries either way, the
	// neighbourhood of the focus reaches.
	Depth int
}

// SelectionError says which part of a Selection names nothing.
type SelectionError struct {
	// Part is namespace, broker, focus or depth.
	Part string
	// Value is the part's value as given.
	Value string
	// Reason says what is wrong, and suggests a near name if there is one.
	Reason string
}

func (e *SelectionError) Error() string {
	return fmt.Sprintf("%s %q: %s", e.Part, e.Value, e.Reason)
}

// Select returns the part of g that sel picks. A Trigger or Subscription
// is always drawn with its Broker or Channel, which is part of its name. A
// namespace, Broker or focus that names nothing is an error, which
// suggests a near name when there is one.
func (g *Graph) Select(sel Selection) (*Graph, error) {
	if sel.Depth < 0 {
		return nil, &SelectionError{"depth", fmt.Sprint(sel.Depth), "give 0 or more steps"}
	}
	out := g
	if len(sel.Namespaces) > 0 {
		have := map[string]bool{}
		var names []string
		for _, ns := range g.Namespaces {
			if len(ns.Sources) > 0 {
				have[ns.Name] = true
				names = append(names, ns.Name)
			}
		}
		for _, want := range sel.Namespaces {
			if !have[want] {
				return nil, &SelectionError{"namespace", want, "no Broker or Channel is in that namespace" + suggest(want, names)}
			}
		}
		out = out.keepSources(func(s *Source) bool { return slices.Contains(sel.Namespaces, s.Namespace) })
	}
	if len(sel.Brokers) > 0 {
		var names, candidates []string
		for _, ns := range out.Namespaces {
			for _, s := range ns.Sources {
				if s.Kind == KindBroker {
					names = append(names, s.Namespace+"/"+s.Name)
					candidates = append(candidates, s.Namespace+"/"+s.Name, s.Name)
				}
			}
		}
		for _, want := range sel.Brokers {
			if !slices.ContainsFunc(names, func(n string) bool { return brokerMatches(want, n) }) {
				return nil, &SelectionError{"broker", want, "no Broker has that name" + suggest(want, candidates)}
			}
		}
		out = out.keepSources(func(s *Source) bool {
			return s.Kind == KindBroker && slices.ContainsFunc(sel.Brokers, func(want string) bool { return brokerMatches(want, s.Namespace+"/"+s.Name) })
		})
	}
	if sel.Focus != "" {
		id, err := out.findNode(sel.Focus)
		if err != nil {
			return nil, err
		}
		out = out.keep(out.neighbourhood(id, sel.Depth))
	}
	return out, nil
}

// brokerMatches reports whether a Broker given as NAME or NAMESPACE/NAME
// names the Broker whose NAMESPACE/NAME is full.
func brokerMatches(want, full string) bool {
	if strings.Contains(want, "/") {
		return want == full
	}
	_, name, _ := strings.Cut(full, "/")
	return want == name
}

// keepSources keeps the sources pick picks, all their routes, and the
// nodes these deliver to.
func (g *Graph) keepSources(pick func(*Source) bool) *Graph {
	kept := map[string]bool{}
	g.each(func(s *Source) {
		if !pick(s) {
			return
		}
		kept[s.ID] = true
		for _, e := range s.Edges {
			kept[e.To] = true
		}
		for _, r := range s.Routes {
			kept[r.ID] = true
			for _, e := range r.Edges {
				kept[e.To] = true
			}
		}
	})
	return g.keep(kept)
}

func (g *Graph) each(f func(*Source)) {
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			f(s)
		}
	}
}

// neighbourhood returns the IDs of the nodes at most depth steps from id,
// along edges either way; a Broker or Channel and each of its routes are
// one step apart.
func (g *Graph) neighbourhood(id string, depth int) map[string]bool {
	adjacent := map[string][]string{}
	link := func(a, b string) {
		adjacent[a] = append(adjacent[a], b)
		adjacent[b] = append(adjacent[b], a)
	}
	g.each(func(s *Source) {
		for _, e := range s.Edges {
			link(s.ID, e.To)
		}
		for _, r := range s.Routes {
			link(s.ID, r.ID)
			for _, e := range r.Edges {
				link(r.ID, e.To)
			}
		}
	})
	kept := map[string]bool{id: true}
	frontier := []string{id}
	for range depth {
		var next []string
		for _, n := range frontier {
			for _, m := range adjacent[n] {
				if !kept[m] {
					kept[m] = true
					next = append(next, m)
				}
			}
		}
		frontier = next
	}
	return kept
}

// keep returns the part of g made of the nodes in kept, with the edges
// between them. A source is kept for a kept route of its own.
func (g *Graph) keep(kept map[string]bool) *Graph {
	out := &Graph{}
	for _, ns := range g.Namespaces {
		n := &Namespace{Name: ns.Name}
		for _, s := range ns.Sources {
			c := *s
			c.Routes, c.Edges = nil, keepEdges(s.Edges, kept)
			for _, r := range s.Routes {
				if kept[r.ID] {
					rc := *r
					rc.Edges = keepEdges(r.Edges, kept)
					c.Routes = append(c.Routes, &rc)
				}
			}
			if kept[s.ID] || len(c.Routes) > 0 {
				if !kept[s.ID] {
					c.Edges = nil
				}
				n.Sources = append(n.Sources, &c)
			}
		}
		for _, s := range ns.Sinks {
			if kept[s.ID] {
				n.Sinks = append(n.Sinks, s)
			}
		}
		if len(n.Sources) > 0 || len(n.Sinks) > 0 {
			out.Namespaces = append(out.Namespaces, n)
		}
	}
	for _, s := range g.Outside {
		if kept[s.ID] {
			out.Outside = append(out.Outside, s)
		}
	}
	return out
}

func keepEdges(edges []*Edge, kept map[string]bool) []*Edge {
	var out []*Edge
	for _, e := range edges {
		if kept[e.To] {
			out = append(out, e)
		}
	}
	return out
}

// findNode returns the ID of the node a focus names: KIND/NAMESPACE/NAME
// with the kind in any case, or a URI destination as uri:URI.
func (g *Graph) findNode(focus string) (string, error) {
	var ids []string
	g.each(func(s *Source) {
		ids = append(ids, s.ID)
		for _, r := range s.Routes {
			ids = append(ids, r.ID)
		}
	})
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sinks {
			ids = append(ids, s.ID)
		}
	}
	for _, s := range g.Outside {
		ids = append(ids, s.ID)
	}
	kind, rest, _ := strings.Cut(focus, "/")
	for _, id := range ids {
		if id == focus {
			return id, nil
		}
		if k, r, _ := strings.Cut(id, "/"); strings.EqualFold(k, kind) && r == rest {
			return id, nil
		}
	}
	hint := suggest(focus, ids)
	if hint == "" && strings.Count(focus, "/") != 2 && !strings.HasPrefix(focus, "uri:") {
		hint = "; give KIND/NAMESPACE/NAME, such as Trigger/default/orders"
	}
	return "", &SelectionError{"focus", focus, "no node of the graph has that name" + hint}
}

// suggest returns a did-you-mean hint naming the candidate nearest to
// name, if one is near enough to be a misspelling of it.
func suggest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(c))
		if d <= max(2, len(name)/5) && (bestDist < 0 || d < bestDist) {
			best, bestDist = c, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}
