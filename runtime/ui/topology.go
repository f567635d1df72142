package ui

import (
	"net/url"
	"reflect"
	"strings"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
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

// view is a table drawn: the graph package topology renders, and the
// nodes of the page in the order the graph names them.
type view struct {
	graph *topology.Graph
	nodes []Node
}

// buildView turns a routing table into the graph knc graph draws from a
// project, or takes drawn, that graph, when it is known.
func buildView(t *routing.Table, drawn *topology.Graph) *view {
	b := &tableGraph{
		sources: map[string]*topology.Source{},
		sinks:   map[string]*topology.Sink{},
	}
	if t != nil {
		b.addresses = map[string]string{}
		for _, br := range t.Brokers {
			if br.Address != "" {
				b.addresses[br.Address] = nodeID(topology.KindBroker, br.Namespace, br.Name)
			}
		}
		for _, ch := range t.Channels {
			if ch.Address != "" {
				b.addresses[ch.Address] = nodeID(topology.KindChannel, ch.Namespace, ch.Name)
			}
		}
		for i := range t.Brokers {
			b.broker(&t.Brokers[i])
		}
		for i := range t.Channels {
			b.channel(&t.Channels[i])
		}
		for i := range t.PingSources {
			b.pingSource(&t.PingSources[i])
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
// of top.graph.
func (top *view) nameShort() {
	short := topology.ShortNames(top.graph)
	for i := range top.nodes {
		top.nodes[i].Short = short[top.nodes[i].ID]
	}
}

type tableGraph struct {
	sources map[string]*topology.Source
	sinks   map[string]*topology.Sink
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
	s := b.source(topology.KindBroker, br.Source, br.Address, br.Path)
	s.Class = servedBrokerClass
	s.Edges = b.deadLetter(br.Delivery, s.Edges)
	for _, tr := range br.Triggers {
		r := &topology.Route{ID: nodeID(topology.KindTrigger, tr.Namespace, tr.Name), Kind: topology.KindTrigger, Namespace: tr.Namespace, Name: tr.Name}
		r.Filter = topology.DescribeFilter(tr.Attributes, tr.Filters)
		sub := tr.Subscriber
		r.Edges = append(r.Edges, b.edge(topology.Subscriber, &sub))
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
	s := b.source(topology.KindChannel, ch.Source, ch.Address, ch.Path)
	s.Edges = b.deadLetter(ch.Delivery, s.Edges)
	for _, sub := range ch.Subscriptions {
		r := &topology.Route{ID: nodeID(topology.KindSubscription, sub.Namespace, sub.Name), Kind: topology.KindSubscription, Namespace: sub.Namespace, Name: sub.Name}
		if sub.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(topology.Subscriber, sub.Subscriber))
		}
		if sub.Reply != nil {
			r.Edges = append(r.Edges, b.edge(topology.Reply, sub.Reply))
		}
		if ownDeadLetter(sub.Delivery, ch.Delivery) {
			r.Edges = b.deadLetter(sub.Delivery, r.Edges)
		}
		b.route(r, describe(sub.Subscriber))
		s.Routes = append(s.Routes, r)
	}
}

// pingSource draws a PingSource feeding its sink, as knc graph draws an
// event source: by kind and group, neither served nor external.
func (b *tableGraph) pingSource(p *routing.PingSource) {
	kind := knative.KindLabel(knative.GroupSources, knative.KindPingSource)
	id := nodeID(kind, p.Namespace, p.Name)
	s := &topology.Source{ID: id, Kind: knative.KindPingSource, Namespace: p.Namespace, Name: p.Name}
	sink := p.Sink
	s.Edges = append(s.Edges, b.edge(topology.SinkOf, &sink))
	b.sources[id] = s
}

// ownDeadLetter reports whether a route's effective delivery has a
// dead-letter sink of its own, which knc graph draws at the route. The
// table holds the route's own delivery when it sets any field, else its
// source's: a delivery unlike its source's is the route's own, and so is
// its sink, even when it is the source's sink too. A delivery the route
// sets equal to its source's in every field cannot be told from none, and
// its sink is drawn at the source alone.
func ownDeadLetter(route, source *routing.Delivery) bool {
	if route == nil || route.DeadLetterSink == nil {
		return false
	}
	return source == nil || !reflect.DeepEqual(*route, *source)
}

func (b *tableGraph) route(r *topology.Route, subscriber string) {
	if b.filters == nil {
		b.filters, b.subscribers = map[string]string{}, map[string]string{}
	}
	b.filters[r.ID] = r.Filter
	b.subscribers[r.ID] = subscriber
}

func (b *tableGraph) source(kind string, o routing.Source, address, path string) *topology.Source {
	id := nodeID(kind, o.Namespace, o.Name)
	if b.paths == nil {
		b.paths = map[string]string{}
	}
	b.paths[id] = path
	s := &topology.Source{ID: id, Kind: kind, Namespace: o.Namespace, Name: o.Name, Served: true, Address: redact.URI(address)}
	b.sources[id] = s
	return s
}

func (b *tableGraph) deadLetter(d *routing.Delivery, edges []*topology.Edge) []*topology.Edge {
	if d == nil || d.DeadLetterSink == nil {
		return edges
	}
	return append(edges, b.edge(topology.DeadLetter, d.DeadLetterSink))
}

// edge makes the edge to a destination, and its sink unless it is a
// source of the table. URIs are masked as knc graph masks them.
//
// The compiler resolved the references it could: a URI that is the
// address of a Broker or Channel of the table goes to it, and one of a
// Service in the cluster (http://NAME.NAMESPACE.svc…) to that Service, as
// knc graph draws the reference the URI was resolved from.
func (b *tableGraph) edge(role topology.Role, d *routing.Destination) *topology.Edge {
	uri := redact.URI(d.URI)
	if d.Ref == nil {
		if id, ok := b.addresses[d.URI]; ok {
			return &topology.Edge{Role: role, To: id, URI: uri}
		}
		if ns, name, path, ok := clusterService(d.URI); ok {
			e := &topology.Edge{Role: role, To: nodeID(kindService, ns, name), Path: redact.URI(path), URI: uri}
			if _, ok := b.sinks[e.To]; !ok {
				b.sinks[e.To] = &topology.Sink{ID: e.To, Kind: kindService, Namespace: ns, Name: name}
			}
			return e
		}
		e := &topology.Edge{Role: role, To: "uri:" + uri, URI: uri}
		if _, ok := b.sinks[e.To]; !ok {
			b.sinks[e.To] = &topology.Sink{ID: e.To, Kind: topology.KindURI, URI: uri}
		}
		return e
	}
	kind := knative.KindLabel(apiGroup(d.Ref.APIVersion), d.Ref.Kind)
	e := &topology.Edge{Role: role, To: nodeID(kind, d.Ref.Namespace, d.Ref.Name), Path: uri}
	if _, ok := b.sinks[e.To]; !ok {
		b.sinks[e.To] = &topology.Sink{ID: e.To, Kind: kind, Namespace: d.Ref.Namespace, Name: d.Ref.Name}
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
	s := knative.KindLabel(apiGroup(d.Ref.APIVersion), d.Ref.Kind) + " " + d.Ref.Namespace + "/" + d.Ref.Name
	if d.URI != "" {
		s += " " + redact.URI(d.URI)
	}
	return s
}

// finish places every node in its namespace, as knc graph places them.
func (b *tableGraph) finish() *view {
	g := topology.Assemble(b.sources, b.sinks)
	top := &view{graph: g}
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

// servedBrokerClass is the class of every Broker a routing table holds:
// the runtime serves only Brokers of knc's own class.
const servedBrokerClass = "knc"

// apiGroup returns the API group of an apiVersion, "" for the core group.
func apiGroup(apiVersion string) string {
	group, _, ok := strings.Cut(apiVersion, "/")
	if !ok {
		return ""
	}
	return group
}
