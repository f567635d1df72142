package topology

import "slices"

// Changes returns the part of the topology that differs between two
// revisions: sources and routes added, removed or changed, each marked so,
// and the edges of changed routes, an edge whose target changed appearing
// twice, once Removed and once Added. Sources are kept, Unchanged, when
// only their routes changed, so every changed route is drawn where it
// hangs. It returns an empty graph when nothing differs.
func Changes(base, head *Graph) *Graph {
	baseSources, headSources := base.sourcesByID(), head.sourcesByID()
	baseSinks, headSinks := base.sinksByID(), head.sinksByID()

	sources, sinks := map[string]*Source{}, map[string]*Sink{}
	keep := func(s *Source) {
		sources[s.ID] = s
	}
	for id, h := range headSources {
		b, ok := baseSources[id]
		if !ok {
			keep(mark(h, Added))
			continue
		}
		if s := diffSource(b, h); s != nil {
			keep(s)
		}
	}
	for id, b := range baseSources {
		if _, ok := headSources[id]; !ok {
			keep(mark(b, Removed))
		}
	}
	// Bring along the sinks the kept edges point at, marked by whether
	// they exist at either revision only.
	for _, s := range sources {
		for _, e := range s.allEdges() {
			if _, ok := sources[e.To]; ok {
				continue
			}
			if _, ok := sinks[e.To]; ok {
				continue
			}
			if sink := sinkFor(e.To, baseSinks, headSinks, baseSources, headSources); sink != nil {
				sinks[e.To] = sink
			}
		}
	}
	return Assemble(sources, sinks)
}

func (s *Source) allEdges() []*Edge {
	edges := slices.Clone(s.Edges)
	for _, r := range s.Routes {
		edges = append(edges, r.Edges...)
	}
	return edges
}

// sinkFor returns the node an edge of the changed graph points at, when it
// is not one of the kept sources: a sink, or a source drawn as a sink
// because nothing about it changed.
func sinkFor(id string, baseSinks, headSinks map[string]*Sink, baseSources, headSources map[string]*Source) *Sink {
	b, inBase := baseSinks[id]
	h, inHead := headSinks[id]
	switch {
	case inBase && inHead:
		c := *h
		return &c
	case inHead:
		c := *h
		c.Status = Added
		return &c
	case inBase:
		c := *b
		c.Status = Removed
		return &c
	}
	src := headSources[id]
	if src == nil {
		src = baseSources[id]
	}
	if src == nil {
		return nil
	}
	return &Sink{ID: src.ID, Kind: src.Kind, Namespace: src.Namespace, Name: src.Name}
}

// mark copies a source with everything in it set to status.
func mark(s *Source, status Status) *Source {
	c := *s
	c.Status = status
	c.Edges = markEdges(s.Edges, status)
	c.Routes = make([]*Route, len(s.Routes))
	for i, r := range s.Routes {
		rc := *r
		rc.Status = status
		rc.Edges = markEdges(r.Edges, status)
		c.Routes[i] = &rc
	}
	return &c
}

func markEdges(edges []*Edge, status Status) []*Edge {
	out := make([]*Edge, len(edges))
	for i, e := range edges {
		c := *e
		c.Status = status
		out[i] = &c
	}
	return out
}

// diffSource returns the changed parts of a source present at both
// revisions, or nil when nothing about it changed.
func diffSource(b, h *Source) *Source {
	c := *h
	c.Edges, c.Routes = nil, nil
	edges, edgesChanged := compareEdges(b.Edges, h.Edges)
	if edgesChanged || b.Class != h.Class || b.Served != h.Served || b.External != h.External || b.Address != h.Address {
		c.Status = Changed
		c.Edges = edges
	}
	baseRoutes := map[string]*Route{}
	for _, r := range b.Routes {
		baseRoutes[r.ID] = r
	}
	for _, hr := range h.Routes {
		br, ok := baseRoutes[hr.ID]
		if !ok {
			rc := *hr
			rc.Status = Added
			rc.Edges = markEdges(hr.Edges, Added)
			c.Routes = append(c.Routes, &rc)
			continue
		}
		delete(baseRoutes, hr.ID)
		edges, changed := compareEdges(br.Edges, hr.Edges)
		if !changed && br.Filter == hr.Filter {
			continue
		}
		rc := *hr
		rc.Status = Changed
		rc.Edges = edges
		c.Routes = append(c.Routes, &rc)
	}
	for _, br := range baseRoutes {
		rc := *br
		rc.Status = Removed
		rc.Edges = markEdges(br.Edges, Removed)
		c.Routes = append(c.Routes, &rc)
	}
	if c.Status == Unchanged && len(c.Routes) == 0 {
		return nil
	}
	return &c
}

// compareEdges merges the edges of one node at two revisions; an edge is
// the same when its role, target and path are.
func compareEdges(base, head []*Edge) ([]*Edge, bool) {
	type key struct {
		role     Role
		to, path string
	}
	inBase := map[key]bool{}
	for _, e := range base {
		inBase[key{e.Role, e.To, e.Path}] = true
	}
	changed := false
	var out []*Edge
	for _, e := range head {
		k := key{e.Role, e.To, e.Path}
		c := *e
		if inBase[k] {
			delete(inBase, k)
		} else {
			c.Status = Added
			changed = true
		}
		out = append(out, &c)
	}
	for _, e := range base {
		if inBase[key{e.Role, e.To, e.Path}] {
			c := *e
			c.Status = Removed
			changed = true
			out = append(out, &c)
		}
	}
	return out, changed
}

func (g *Graph) sourcesByID() map[string]*Source {
	m := map[string]*Source{}
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			m[s.ID] = s
		}
	}
	return m
}

func (g *Graph) sinksByID() map[string]*Sink {
	m := map[string]*Sink{}
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sinks {
			m[s.ID] = s
		}
	}
	for _, s := range g.Outside {
		m[s.ID] = s
	}
	return m
}

// Empty reports whether the graph has no nodes.
func (g *Graph) Empty() bool {
	return len(g.Namespaces) == 0 && len(g.Outside) == 0
}
