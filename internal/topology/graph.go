package topology

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// Status says how a part of a graph changed from a base revision. Graphs of
// one revision hold only Unchanged.
type Status int

// The statuses.
const (
	Unchanged Status = iota
	Added
	Removed
	Changed
)

func (s Status) String() string {
	switch s {
	case Added:
		return "added"
	case Removed:
		return "removed"
	case Changed:
		return "changed"
	}
	return "unchanged"
}

// Graph is a project's topology.
type Graph struct {
	// Namespaces are sorted by name.
	Namespaces []*Namespace
	// Outside holds destinations given by URI alone, which belong to no
	// namespace of the project.
	Outside []*Sink
}

// Namespace holds the nodes of one namespace.
type Namespace struct {
	Name string
	// Sources are the Brokers, then the Channels, each sorted by name.
	Sources []*Source
	// Sinks are the other objects delivered to, sorted by kind and name.
	Sinks []*Sink
}

// Node kinds besides the kinds of referenced objects.
const (
	KindBroker       = "Broker"
	KindChannel      = "Channel"
	KindTrigger      = "Trigger"
	KindSubscription = "Subscription"
	// KindURI is the kind of a Sink given by a URI.
	KindURI = "URI"
	// KindStep and KindBranch are the routes of a Sequence and of a
	// Parallel.
	KindStep   = "Step"
	KindBranch = "Branch"
)

// AddPart adds to s, a Sequence or a Parallel, the route of its step or
// branch i of n (KindStep or KindBranch), named "I of N". Its ID sorts in
// order, since routes are drawn sorted by ID: knc graph and the runtime's
// page name the parts of a flow alike.
func AddPart(s *Source, kind string, i, n int) *Route {
	name := fmt.Sprintf("%d of %d", i+1, n)
	id := fmt.Sprintf("%s/%0*d", s.ID, len(strconv.Itoa(n)), i+1)
	r := &Route{ID: id, Kind: kind, Namespace: s.Namespace, Name: name}
	s.Routes = append(s.Routes, r)
	return r
}

// Source is where events enter: a Broker or a Channel, which routes them
// (Routes), a Sequence or a Parallel, whose Routes are its steps or
// branches in order, or an event source such as a PingSource, which makes
// them and sends them to its sink (Edges).
type Source struct {
	ID        string
	Kind      string
	Namespace string
	Name      string
	// Class is a Broker's class or a Channel's template kind.
	Class string
	// Served says whether knc's runtime serves it.
	Served bool
	// External is set for a Broker or Channel the repository refers to but
	// does not hold (declared under external in knc.yaml).
	External bool
	// Address is where it receives events, when knc serves it.
	Address string
	// Edges holds its own dead-letter sink, if any, or an event source's
	// sink.
	Edges  []*Edge
	Routes []*Route
	Status Status
}

// Route is a Trigger or a Subscription.
type Route struct {
	ID        string
	Kind      string
	Namespace string
	Name      string
	// Filter is the Trigger's filter as one expression (see DescribeFilter);
	// empty when every event passes.
	Filter string
	// Edges are its subscriber, reply and dead-letter sink.
	Edges  []*Edge
	Status Status
}

// Role says what an edge delivers.
type Role string

// The roles of edges.
const (
	Subscriber Role = "subscriber"
	Reply      Role = "reply"
	DeadLetter Role = "dead letter"
	// SinkOf is where an event source (a PingSource, an ApiServerSource…)
	// sends the events it makes.
	SinkOf Role = "sink"
	// Filter is a Parallel branch's filter, which decides whether the
	// branch's subscriber gets the event.
	Filter Role = "filter"
)

// Edge is a delivery from a Route (or a Source's dead letters) to a node.
type Edge struct {
	Role Role
	// To is the ID of a Source or a Sink.
	To string
	// Path is a URI relative to the referenced object's address, such as
	// /review, when the destination gives both.
	Path string
	// URI is the resolved address, when the compiler knows it.
	URI    string
	Status Status
}

// Sink is an object, other than a Broker or Channel of the project, that
// events are delivered to: a Service, an external Broker, or a bare URI.
type Sink struct {
	ID        string
	Kind      string
	Namespace string
	Name      string
	// URI is the address of a KindURI sink.
	URI    string
	Status Status
}

// Label is how the sink is named in drawings.
func (s *Sink) Label() string {
	if s.Kind == KindURI {
		return s.URI
	}
	return s.Name
}

// Assemble makes a graph of its nodes: each source and sink is placed in
// its namespace, a sink given by a URI outside every namespace, and an
// edge to a node that is neither a source nor a sink makes a sink, named
// by the edge's target ID (KIND/NAMESPACE/NAME). A sink with the ID of a
// source is drawn as that source. Everything is sorted, so that the same
// nodes give the same graph.
func Assemble(sources map[string]*Source, sinks map[string]*Sink) *Graph {
	g := &Graph{}
	namespaces := map[string]*Namespace{}
	namespace := func(name string) *Namespace {
		ns, ok := namespaces[name]
		if !ok {
			ns = &Namespace{Name: name}
			namespaces[name] = ns
			g.Namespaces = append(g.Namespaces, ns)
		}
		return ns
	}
	for _, s := range sources {
		ns := namespace(s.Namespace)
		ns.Sources = append(ns.Sources, s)
		slices.SortFunc(s.Routes, func(x, y *Route) int { return cmp.Compare(x.ID, y.ID) })
	}
	all := maps.Clone(sinks)
	if all == nil {
		all = map[string]*Sink{}
	}
	addSink := func(e *Edge) {
		if _, ok := sources[e.To]; ok {
			return
		}
		if _, ok := all[e.To]; ok {
			return
		}
		kind, ns, name := splitID(e.To)
		all[e.To] = &Sink{ID: e.To, Kind: kind, Namespace: ns, Name: name}
	}
	for _, s := range sources {
		for _, e := range s.Edges {
			addSink(e)
		}
		for _, r := range s.Routes {
			for _, e := range r.Edges {
				addSink(e)
			}
		}
	}
	for id, s := range all {
		if _, ok := sources[id]; ok {
			continue
		}
		if s.Kind == KindURI {
			g.Outside = append(g.Outside, s)
			continue
		}
		ns := namespace(s.Namespace)
		ns.Sinks = append(ns.Sinks, s)
	}
	g.sort()
	return g
}

func (g *Graph) sort() {
	slices.SortFunc(g.Namespaces, func(x, y *Namespace) int { return cmp.Compare(x.Name, y.Name) })
	for _, ns := range g.Namespaces {
		slices.SortFunc(ns.Sources, compareSources)
		slices.SortFunc(ns.Sinks, compareSinks)
	}
	slices.SortFunc(g.Outside, compareSinks)
}

func compareSources(x, y *Source) int {
	return cmp.Or(cmp.Compare(kindRank(x.Kind), kindRank(y.Kind)), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name))
}

func kindRank(kind string) int {
	if kind == KindBroker {
		return 0
	}
	return 1
}

func compareSinks(x, y *Sink) int {
	return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name), cmp.Compare(x.URI, y.URI))
}

// splitID splits a node ID into kind, namespace and name.
func splitID(id string) (kind, namespace, name string) {
	first := -1
	for i := 0; i < len(id); i++ {
		if id[i] == '/' {
			if first < 0 {
				first = i
				continue
			}
			return id[:first], id[first+1 : i], id[i+1:]
		}
	}
	return id, "", ""
}
