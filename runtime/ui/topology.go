package ui

import (
	"cmp"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/routing"
)

// Node is one Broker, Channel, Trigger or Subscription of the page.
type Node struct {
	// ID is the node's ID in the drawing: KIND/NAMESPACE/NAME.
	ID string `json:"id"`
	// Short is the node's short name in the drawing (n0, n1, …), which
	// drawings without IDs name it by.
	Short     string `json:"short"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Source is the ID of a Trigger's Broker or a Subscription's Channel.
	Source string `json:"source,omitempty"`
	// Filter is a Trigger's filter as one expression, empty when it passes
	// every event.
	Filter string `json:"filter,omitempty"`
	// Subscriber is where a Trigger or Subscription delivers, masked.
	Subscriber string `json:"subscriber,omitempty"`
	// Path is where a Broker or Channel takes events on the runtime's
	// listener.
	Path string `json:"path,omitempty"`
}

// topology is a table drawn: the graph compiler/graph renders, and the
// nodes of the page in the order the graph names them.
type topology struct {
	graph *graph.Graph
	nodes []Node
}

// buildTopology turns a routing table into the graph knc graph draws from
// a project, or takes drawn, that graph, when it is known.
func buildTopology(t *routing.Table, drawn *graph.Graph) *topology {
	b := &tableGraph{
		namespaces: map[string]*graph.Namespace{},
		sources:    map[string]*graph.Source{},
		sinks:      map[string]*graph.Sink{},
	}
	if t != nil {
		b.addresses = map[string]string{}
		for _, br := range t.Brokers {
			if br.Address != "" {
				b.addresses[br.Address] = nodeID(graph.KindBroker, br.Namespace, br.Name)
			}
		}
		for _, ch := range t.Channels {
			if ch.Address != "" {
				b.addresses[ch.Address] = nodeID(graph.KindChannel, ch.Namespace, ch.Name)
			}
		}
		for i := range t.Brokers {
			b.broker(&t.Brokers[i])
		}
		for i := range t.Channels {
			b.channel(&t.Channels[i])
		}
	}
	top := b.finish()
	if drawn != nil {
		top.graph = drawn
		top.nameShort()
	}
	return top
}

// nameShort gives the nodes the short names the renderer gives the boxes
// of top.graph: n0, n1, … in the order of its namespaces, each with its
// sources, each followed by its routes, then its sinks.
func (top *topology) nameShort() {
	short := map[string]string{}
	count := 0
	next := func() string {
		s := "n" + strconv.Itoa(count)
		count++
		return s
	}
	for _, n := range top.graph.Namespaces {
		for _, s := range n.Sources {
			short[s.ID] = next()
			for _, r := range s.Routes {
				short[r.ID] = next()
			}
		}
		for range n.Sinks {
			next()
		}
	}
	for i := range top.nodes {
		top.nodes[i].Short = short[top.nodes[i].ID]
	}
}

type tableGraph struct {
	namespaces map[string]*graph.Namespace
	sources    map[string]*graph.Source
	sinks      map[string]*graph.Sink
	// filters and subscribers of the routes, by route ID.
	filters     map[string]string
	subscribers map[string]string
	// paths of the sources, by ID.
	paths map[string]string
	// addresses maps the addresses of the sources to their IDs.
	addresses map[string]string
}

func nodeID(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

func (b *tableGraph) broker(br *routing.Broker) {
	s := b.source(graph.KindBroker, br.Source, br.Address, br.Path)
	s.Class = model.BrokerClassKnc
	s.Edges = b.deadLetter(br.Delivery, s.Edges)
	for _, tr := range br.Triggers {
		r := &graph.Route{ID: nodeID(graph.KindTrigger, tr.Namespace, tr.Name), Kind: graph.KindTrigger, Namespace: tr.Namespace, Name: tr.Name}
		r.Filter = graph.TriggerFilter(modelTrigger(&tr))
		sub := tr.Subscriber
		r.Edges = append(r.Edges, b.edge(graph.Subscriber, &sub))
		// The table holds the effective delivery, the Broker's when the
		// Trigger sets none: draw the dead-letter sink at the Trigger only
		// when it is its own.
		if ownDeadLetter(tr.Delivery, br.Delivery) {
			r.Edges = b.deadLetter(tr.Delivery, r.Edges)
		}
		b.route(r, describe(&sub))
		s.Routes = append(s.Routes, r)
	}
}

func (b *tableGraph) channel(ch *routing.Channel) {
	s := b.source(graph.KindChannel, ch.Source, ch.Address, ch.Path)
	s.Edges = b.deadLetter(ch.Delivery, s.Edges)
	for _, sub := range ch.Subscriptions {
		r := &graph.Route{ID: nodeID(graph.KindSubscription, sub.Namespace, sub.Name), Kind: graph.KindSubscription, Namespace: sub.Namespace, Name: sub.Name}
		if sub.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(graph.Subscriber, sub.Subscriber))
		}
		if sub.Reply != nil {
			r.Edges = append(r.Edges, b.edge(graph.Reply, sub.Reply))
		}
		if ownDeadLetter(sub.Delivery, ch.Delivery) {
			r.Edges = b.deadLetter(sub.Delivery, r.Edges)
		}
		b.route(r, describe(sub.Subscriber))
		s.Routes = append(s.Routes, r)
	}
}

// ownDeadLetter reports whether a route's effective delivery has a
// dead-letter sink other than its source's.
func ownDeadLetter(route, source *routing.Delivery) bool {
	if route == nil || route.DeadLetterSink == nil {
		return false
	}
	return source == nil || describe(route.DeadLetterSink) != describe(source.DeadLetterSink)
}

func (b *tableGraph) route(r *graph.Route, subscriber string) {
	if b.filters == nil {
		b.filters, b.subscribers = map[string]string{}, map[string]string{}
	}
	b.filters[r.ID] = r.Filter
	b.subscribers[r.ID] = subscriber
}

func (b *tableGraph) source(kind string, o routing.Source, address, path string) *graph.Source {
	id := nodeID(kind, o.Namespace, o.Name)
	if b.paths == nil {
		b.paths = map[string]string{}
	}
	b.paths[id] = path
	s := &graph.Source{ID: id, Kind: kind, Namespace: o.Namespace, Name: o.Name, Served: true, Address: redact.URI(address)}
	b.sources[id] = s
	return s
}

func (b *tableGraph) deadLetter(d *routing.Delivery, edges []*graph.Edge) []*graph.Edge {
	if d == nil || d.DeadLetterSink == nil {
		return edges
	}
	return append(edges, b.edge(graph.DeadLetter, d.DeadLetterSink))
}

// edge makes the edge to a destination, and its sink unless it is a
// source of the table. URIs are masked as knc graph masks them.
//
// The compiler resolved the references it could: a URI that is the
// address of a Broker or Channel of the table goes to it, and one of a
// Service in the cluster (http://NAME.NAMESPACE.svc…) to that Service, as
// knc graph draws the reference the URI was resolved from.
func (b *tableGraph) edge(role graph.Role, d *routing.Destination) *graph.Edge {
	uri := redact.URI(d.URI)
	if d.Ref == nil {
		if id, ok := b.addresses[d.URI]; ok {
			return &graph.Edge{Role: role, To: id, URI: uri}
		}
		if ns, name, path, ok := clusterService(d.URI); ok {
			e := &graph.Edge{Role: role, To: nodeID(kindService, ns, name), Path: redact.URI(path), URI: uri}
			if _, ok := b.sinks[e.To]; !ok {
				b.sinks[e.To] = &graph.Sink{ID: e.To, Kind: kindService, Namespace: ns, Name: name}
			}
			return e
		}
		e := &graph.Edge{Role: role, To: "uri:" + uri, URI: uri}
		if _, ok := b.sinks[e.To]; !ok {
			b.sinks[e.To] = &graph.Sink{ID: e.To, Kind: graph.KindURI, URI: uri}
		}
		return e
	}
	kind := knative.KindLabel(model.Group(d.Ref.APIVersion), d.Ref.Kind)
	e := &graph.Edge{Role: role, To: nodeID(kind, d.Ref.Namespace, d.Ref.Name), Path: uri}
	if _, ok := b.sinks[e.To]; !ok {
		b.sinks[e.To] = &graph.Sink{ID: e.To, Kind: kind, Namespace: d.Ref.Namespace, Name: d.Ref.Name}
	}
	return e
}

// kindService is the kind of a v1 Service, which a URI in the cluster is
// drawn as.
const kindService = "Service"

// clusterService reads the Service a URI of the cluster's DNS addresses:
// http://NAME.NAMESPACE.svc[.DOMAIN][:PORT][PATH], path "" for "/".
func clusterService(uri string) (namespace, name, path string, ok bool) {
	u, err := url.Parse(uri)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.User != nil {
		return "", "", "", false
	}
	labels := strings.Split(u.Hostname(), ".")
	if len(labels) < 3 || labels[2] != "svc" || labels[0] == "" || labels[1] == "" {
		return "", "", "", false
	}
	path = u.EscapedPath()
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	if path == "/" {
		path = ""
	}
	return labels[1], labels[0], path, true
}

// describe names a destination for the page.
func describe(d *routing.Destination) string {
	if d == nil {
		return ""
	}
	if d.Ref == nil {
		return redact.URI(d.URI)
	}
	s := knative.KindLabel(model.Group(d.Ref.APIVersion), d.Ref.Kind) + " " + d.Ref.Namespace + "/" + d.Ref.Name
	if d.URI != "" {
		s += " " + redact.URI(d.URI)
	}
	return s
}

// finish places every node in its namespace, sorted as graph.Build sorts.
func (b *tableGraph) finish() *topology {
	g := &graph.Graph{}
	ns := func(name string) *graph.Namespace {
		n, ok := b.namespaces[name]
		if !ok {
			n = &graph.Namespace{Name: name}
			b.namespaces[name] = n
			g.Namespaces = append(g.Namespaces, n)
		}
		return n
	}
	for _, s := range b.sources {
		n := ns(s.Namespace)
		n.Sources = append(n.Sources, s)
		slices.SortFunc(s.Routes, func(x, y *graph.Route) int { return cmp.Compare(x.ID, y.ID) })
	}
	for id, s := range b.sinks {
		if _, ok := b.sources[id]; ok {
			continue
		}
		if s.Kind == graph.KindURI {
			g.Outside = append(g.Outside, s)
			continue
		}
		n := ns(s.Namespace)
		n.Sinks = append(n.Sinks, s)
	}
	slices.SortFunc(g.Namespaces, func(x, y *graph.Namespace) int { return cmp.Compare(x.Name, y.Name) })
	for _, n := range g.Namespaces {
		slices.SortFunc(n.Sources, func(x, y *graph.Source) int {
			return cmp.Or(cmp.Compare(kindRank(x.Kind), kindRank(y.Kind)), cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name))
		})
		slices.SortFunc(n.Sinks, compareSinks)
	}
	slices.SortFunc(g.Outside, compareSinks)

	top := &topology{graph: g}
	for _, n := range g.Namespaces {
		for _, s := range n.Sources {
			top.nodes = append(top.nodes, Node{ID: s.ID, Kind: s.Kind, Namespace: s.Namespace, Name: s.Name, Path: b.paths[s.ID]})
			for _, r := range s.Routes {
				top.nodes = append(top.nodes, Node{
					ID: r.ID, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name,
					Source: s.ID, Filter: b.filters[r.ID], Subscriber: b.subscribers[r.ID],
				})
			}
		}
	}
	top.nameShort()
	return top
}

func kindRank(kind string) int {
	if kind == graph.KindBroker {
		return 0
	}
	return 1
}

func compareSinks(x, y *graph.Sink) int {
	return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Name, y.Name), cmp.Compare(x.URI, y.URI))
}

// modelTrigger gives graph.TriggerFilter the filter of a table's Trigger
// in the form of the manifest it was compiled from.
func modelTrigger(tr *routing.Trigger) *model.Trigger {
	m := &model.Trigger{}
	if len(tr.Filters) > 0 {
		m.Spec.Filters = modelFilters(tr.Filters)
	} else if len(tr.Attributes) > 0 {
		m.Spec.Filter = &model.TriggerFilter{Attributes: tr.Attributes}
	}
	return m
}

func modelFilters(fs []routing.Filter) []model.SubscriptionsAPIFilter {
	out := make([]model.SubscriptionsAPIFilter, len(fs))
	for i, f := range fs {
		out[i] = modelFilter(f)
	}
	return out
}

func modelFilter(f routing.Filter) model.SubscriptionsAPIFilter {
	m := model.SubscriptionsAPIFilter{Exact: f.Exact, Prefix: f.Prefix, Suffix: f.Suffix}
	if len(f.All) > 0 {
		m.All = modelFilters(f.All)
	}
	if len(f.Any) > 0 {
		m.Any = modelFilters(f.Any)
	}
	if f.Not != nil {
		n := modelFilter(*f.Not)
		m.Not = &n
	}
	if f.CESQL != "" {
		m.CESQL = &f.CESQL
	}
	return m
}
