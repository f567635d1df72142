package graph

import (
	"cmp"
	"slices"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/routing"
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
)

// Source is a Broker or a Channel: where events enter.
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
	// Edges holds its own dead-letter sink, if any.
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

// Build draws the topology of a checked set. The table, compiled from the
// same set, supplies the addresses knc resolved; nil leaves them out.
func Build(set *model.Set, table *routing.Table) *Graph {
	b := &builder{
		namespaces: map[string]*Namespace{},
		sources:    map[string]*Source{},
		sinks:      map[string]*Sink{},
		resolved:   resolvedAddresses(table),
	}
	for _, br := range set.Brokers {
		s := b.source(KindBroker, knative.GroupEventing, br.Metadata.Namespace, br.Metadata.Name)
		s.Class, s.External = br.Class(), false
		s.Served = s.Class == model.BrokerClassKnc
		if br.Spec.Delivery != nil && br.Spec.Delivery.DeadLetterSink != nil {
			s.Edges = append(s.Edges, b.edge(DeadLetter, br.Spec.Delivery.DeadLetterSink, b.resolved[s.ID+"#dls"]))
		}
		s.Address = b.resolved[s.ID]
	}
	for _, ch := range set.Channels {
		s := b.source(KindChannel, knative.GroupMessaging, ch.Metadata.Namespace, ch.Metadata.Name)
		s.External = false
		if t := ch.Spec.ChannelTemplate; t != nil {
			s.Class = t.Kind
		}
		_, s.Served = b.resolved[s.ID]
		s.Address = b.resolved[s.ID]
		if ch.Spec.Delivery != nil && ch.Spec.Delivery.DeadLetterSink != nil {
			s.Edges = append(s.Edges, b.edge(DeadLetter, ch.Spec.Delivery.DeadLetterSink, b.resolved[s.ID+"#dls"]))
		}
	}
	for _, tr := range set.Triggers {
		src := b.source(KindBroker, knative.GroupEventing, tr.Metadata.Namespace, tr.Spec.Broker)
		r := &Route{ID: nodeID(KindTrigger, knative.GroupEventing, tr.Metadata.Namespace, tr.Metadata.Name), Kind: KindTrigger, Namespace: tr.Metadata.Namespace, Name: tr.Metadata.Name}
		r.Filter = TriggerFilter(tr)
		r.Edges = append(r.Edges, b.edge(Subscriber, &tr.Spec.Subscriber, b.resolved[r.ID+"#subscriber"]))
		if tr.Spec.Delivery != nil && tr.Spec.Delivery.DeadLetterSink != nil {
			r.Edges = append(r.Edges, b.edge(DeadLetter, tr.Spec.Delivery.DeadLetterSink, b.resolved[r.ID+"#dls"]))
		}
		src.Routes = append(src.Routes, r)
	}
	for _, sub := range set.Subscriptions {
		ch := sub.ChannelKey()
		src := b.source(ch.Kind, ch.Group, ch.Namespace, ch.Name)
		r := &Route{ID: nodeID(KindSubscription, knative.GroupMessaging, sub.Metadata.Namespace, sub.Metadata.Name), Kind: KindSubscription, Namespace: sub.Metadata.Namespace, Name: sub.Metadata.Name}
		if sub.Spec.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(Subscriber, sub.Spec.Subscriber, b.resolved[r.ID+"#subscriber"]))
		}
		if sub.Spec.Reply != nil {
			r.Edges = append(r.Edges, b.edge(Reply, sub.Spec.Reply, b.resolved[r.ID+"#reply"]))
		}
		if sub.Spec.Delivery != nil && sub.Spec.Delivery.DeadLetterSink != nil {
			r.Edges = append(r.Edges, b.edge(DeadLetter, sub.Spec.Delivery.DeadLetterSink, b.resolved[r.ID+"#dls"]))
		}
		src.Routes = append(src.Routes, r)
	}
	return b.finish()
}

type builder struct {
	namespaces map[string]*Namespace
	sources    map[string]*Source
	sinks      map[string]*Sink
	// resolved maps node IDs (and ID#role for destinations) to the
	// addresses in the routing table.
	resolved map[string]string
}

// nodeID names a node by its object. Brokers and Channels of Knative's own
// groups are named by kind alone, which keeps IDs short in the output.
func nodeID(kind, group, namespace, name string) string {
	return knative.KindLabel(group, kind) + "/" + namespace + "/" + name
}

func (b *builder) namespace(name string) *Namespace {
	ns, ok := b.namespaces[name]
	if !ok {
		ns = &Namespace{Name: name}
		b.namespaces[name] = ns
	}
	return ns
}

// source returns the source node of an object, creating an external one
// when the set does not (yet) define it.
func (b *builder) source(kind, group, namespace, name string) *Source {
	id := nodeID(kind, group, namespace, name)
	if s, ok := b.sources[id]; ok {
		return s
	}
	s := &Source{ID: id, Kind: kind, Namespace: namespace, Name: name, External: true}
	b.sources[id] = s
	return s
}

// edge makes the edge to a destination. A graph is shown and shared: the
// password and query values of every URI are masked (package redact).
func (b *builder) edge(role Role, d *model.Destination, resolved string) *Edge {
	uri := redact.URI(model.Str(d.URI))
	e := &Edge{Role: role, URI: redact.URI(resolved)}
	if d.Ref == nil {
		e.To = "uri:" + uri
		if e.URI == "" {
			e.URI = uri
		}
		if _, ok := b.sinks[e.To]; !ok {
			s := &Sink{ID: e.To, Kind: KindURI, URI: uri}
			b.sinks[e.To] = s
		}
		return e
	}
	e.Path = uri
	e.To = nodeID(d.Ref.Kind, model.Group(d.Ref.APIVersion), d.Ref.Namespace, d.Ref.Name)
	return e
}

// finish places every node in its namespace and sorts everything.
func (b *builder) finish() *Graph {
	g := &Graph{}
	for _, s := range b.sources {
		ns := b.namespace(s.Namespace)
		ns.Sources = append(ns.Sources, s)
		slices.SortFunc(s.Routes, func(x, y *Route) int { return cmp.Compare(x.ID, y.ID) })
	}
	// Edges to objects that are not sources become sinks.
	addSink := func(e *Edge) {
		if _, ok := b.sources[e.To]; ok {
			return
		}
		if _, ok := b.sinks[e.To]; ok {
			return
		}
		kind, ns, name := splitID(e.To)
		b.sinks[e.To] = &Sink{ID: e.To, Kind: kind, Namespace: ns, Name: name}
	}
	for _, s := range b.sources {
		for _, e := range s.Edges {
			addSink(e)
		}
		for _, r := range s.Routes {
			for _, e := range r.Edges {
				addSink(e)
			}
		}
	}
	for _, s := range b.sinks {
		if s.Kind == KindURI {
			g.Outside = append(g.Outside, s)
			continue
		}
		ns := b.namespace(s.Namespace)
		ns.Sinks = append(ns.Sinks, s)
	}
	for _, ns := range b.namespaces {
		g.Namespaces = append(g.Namespaces, ns)
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

// resolvedAddresses indexes the addresses of a routing table by node ID,
// and by ID#role for the destinations of each node.
func resolvedAddresses(t *routing.Table) map[string]string {
	m := map[string]string{}
	if t == nil {
		return m
	}
	put := func(key string, d *routing.Destination) {
		if d != nil && d.Ref == nil && d.URI != "" {
			m[key] = d.URI
		}
	}
	dls := func(key string, d *routing.Delivery) {
		if d != nil {
			put(key+"#dls", d.DeadLetterSink)
		}
	}
	for _, b := range t.Brokers {
		id := nodeID(KindBroker, "", b.Namespace, b.Name)
		m[id] = b.Address
		dls(id, b.Delivery)
		for _, tr := range b.Triggers {
			tid := nodeID(KindTrigger, "", tr.Namespace, tr.Name)
			put(tid+"#subscriber", &tr.Subscriber)
			// The table holds the effective delivery; only the Trigger's
			// own dead-letter sink is drawn at the Trigger.
			dls(tid, tr.Delivery)
		}
	}
	for _, c := range t.Channels {
		id := nodeID(KindChannel, "", c.Namespace, c.Name)
		m[id] = c.Address
		dls(id, c.Delivery)
		for _, s := range c.Subscriptions {
			sid := nodeID(KindSubscription, "", s.Namespace, s.Name)
			put(sid+"#subscriber", s.Subscriber)
			put(sid+"#reply", s.Reply)
			dls(sid, s.Delivery)
		}
	}
	return m
}
