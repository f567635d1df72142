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

// Node is one node of the page: a Broker, Channel, Trigger or
// Subscription, an event source, or a Sequence or Parallel and their
// steps and branches.
type Node struct {
	// ID is the node's ID in the drawing: KIND/NAMESPACE/NAME.
	ID string `json:"id"`
	// Short is the node's short name in the drawing (n0, n1, …), which
	// drawings without IDs name it by.
	Short     string `json:"short"`
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Source is the ID of a Trigger's Broker, a Subscription's Channel, or
	// a step's Sequence or a branch's Parallel.
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
	// countedAs maps the ID of a node the runtime counts under another
	// object to that object's ID: a Sequence or Parallel is counted as
	// its first Channel, a step or branch as the Subscription that
	// delivers to its subscriber.
	countedAs map[string]string
}

// buildView turns a routing table into the graph knc graph draws from a
// project, or takes drawn, that graph, when it is known.
func buildView(t *routing.Table, drawn *topology.Graph) *view {
	b := &tableGraph{
		sources: map[string]*topology.Source{},
		sinks:   map[string]*topology.Sink{},
	}
	if t != nil {
		b.index(t)
		for i := range t.Brokers {
			b.broker(&t.Brokers[i])
		}
		for i := range t.Channels {
			// A flow is drawn as its steps or branches, as knc graph
			// draws it, not as the Channels it was compiled into.
			if _, ok := b.flowChannels[t.Channels[i].Key()]; !ok {
				b.channel(&t.Channels[i])
			}
		}
		for i := range t.PingSources {
			p := &t.PingSources[i]
			b.producer(knative.SourcesV1, knative.KindPingSource, p.Source, &p.Sink)
		}
		for i := range t.Sources {
			s := &t.Sources[i]
			b.producer(s.APIVersion, s.Kind, s.Source, &s.Sink)
		}
		for i := range t.Sequences {
			b.sequence(&t.Sequences[i])
		}
		for i := range t.Parallels {
			b.parallel(&t.Parallels[i])
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
	// channels and subscriptions of the table, by NAMESPACE/NAME, which
	// a flow names its parts by.
	channels      map[string]*routing.Channel
	subscriptions map[string]*routing.Subscription
	// flowChannels are the Channels flows were compiled into, by
	// NAMESPACE/NAME: the ID of the flow whose address the Channel is,
	// else "".
	flowChannels map[string]string
	// countedAs is view.countedAs.
	countedAs map[string]string
	// filters and subscribers of the routes, by route ID.
	filters     map[string]string
	subscribers map[string]string
	// paths of the sources, by ID.
	paths map[string]string
	// addresses maps the addresses of the sources to their IDs.
	addresses map[string]string
}

func nodeID(kind, namespace, name string) string { return kind + "/" + namespace + "/" + name }

// index finds the objects of t by name and by address. An address of a
// flow's Channel is the flow's: a Trigger or a source sending to a
// Sequence was compiled to send to its first Channel.
func (b *tableGraph) index(t *routing.Table) {
	b.addresses = map[string]string{}
	b.channels = map[string]*routing.Channel{}
	b.subscriptions = map[string]*routing.Subscription{}
	b.flowChannels = map[string]string{}
	for _, sq := range t.Sequences {
		for i, name := range sq.Channels {
			b.flowChannels[sq.Namespace+"/"+name] = ""
			if i == 0 {
				b.flowChannels[sq.Namespace+"/"+name] = sequenceID(sq.Namespace, sq.Name)
			}
		}
	}
	for _, p := range t.Parallels {
		b.flowChannels[p.Namespace+"/"+p.Channel] = parallelID(p.Namespace, p.Name)
		for _, br := range p.Branches {
			b.flowChannels[p.Namespace+"/"+br.Channel] = ""
		}
	}
	for _, br := range t.Brokers {
		if br.Address != "" {
			b.addresses[br.Address] = nodeID(topology.KindBroker, br.Namespace, br.Name)
		}
	}
	for i := range t.Channels {
		ch := &t.Channels[i]
		b.channels[ch.Key()] = ch
		for j := range ch.Subscriptions {
			b.subscriptions[ch.Subscriptions[j].Key()] = &ch.Subscriptions[j]
		}
		id, ok := b.flowChannels[ch.Key()]
		if !ok {
			id = nodeID(topology.KindChannel, ch.Namespace, ch.Name)
		}
		if ch.Address != "" && id != "" {
			b.addresses[ch.Address] = id
		}
	}
}

func sequenceID(namespace, name string) string {
	return nodeID(knative.KindLabel(knative.GroupFlows, knative.KindSequence), namespace, name)
}

func parallelID(namespace, name string) string {
	return nodeID(knative.KindLabel(knative.GroupFlows, knative.KindParallel), namespace, name)
}

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

// producer draws an event source feeding its sink, as knc graph draws
// one: by kind and group, neither served nor external.
func (b *tableGraph) producer(apiVersion, kind string, o routing.Source, sink *routing.Destination) {
	id := nodeID(knative.KindLabel(apiGroup(apiVersion), kind), o.Namespace, o.Name)
	s := &topology.Source{ID: id, Kind: kind, Namespace: o.Namespace, Name: o.Name}
	s.Edges = append(s.Edges, b.edge(topology.SinkOf, sink))
	b.sources[id] = s
}

// sequence draws a Sequence as knc graph does: a route per step, in
// order, to the step's subscriber, with the step's own dead-letter sink;
// the last step's reply is the Sequence's. The steps are read from the
// Subscriptions the Sequence was compiled into.
func (b *tableGraph) sequence(sq *routing.Sequence) {
	s := &topology.Source{ID: sequenceID(sq.Namespace, sq.Name), Kind: knative.KindSequence, Namespace: sq.Namespace, Name: sq.Name}
	b.sources[s.ID] = s
	if len(sq.Channels) > 0 {
		b.countAs(s.ID, nodeID(topology.KindChannel, sq.Namespace, sq.Channels[0]))
	}
	for i, name := range sq.Subscriptions {
		r := topology.AddPart(s, topology.KindStep, i, len(sq.Subscriptions))
		b.countAs(r.ID, nodeID(topology.KindSubscription, sq.Namespace, name))
		sub := b.subscriptions[sq.Namespace+"/"+name]
		if sub == nil {
			continue
		}
		if sub.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(topology.Subscriber, sub.Subscriber))
		}
		r.Edges = b.deadLetter(sub.Delivery, r.Edges)
		// Every other step replies to the next step's Channel.
		if i == len(sq.Subscriptions)-1 && sub.Reply != nil {
			r.Edges = append(r.Edges, b.edge(topology.Reply, sub.Reply))
		}
		b.route(r, describe(sub.Subscriber))
	}
}

// parallel draws a Parallel as knc graph does: a route per branch with
// its filter, its subscriber, its reply and its own dead-letter sink. A
// branch's filter Subscription sends to the filter, or straight to the
// branch's Channel when the branch has none.
func (b *tableGraph) parallel(p *routing.Parallel) {
	s := &topology.Source{ID: parallelID(p.Namespace, p.Name), Kind: knative.KindParallel, Namespace: p.Namespace, Name: p.Name}
	b.sources[s.ID] = s
	b.countAs(s.ID, nodeID(topology.KindChannel, p.Namespace, p.Channel))
	for i, br := range p.Branches {
		r := topology.AddPart(s, topology.KindBranch, i, len(p.Branches))
		b.countAs(r.ID, nodeID(topology.KindSubscription, p.Namespace, br.Subscription))
		if f := b.subscriptions[p.Namespace+"/"+br.FilterSubscription]; f != nil && f.Subscriber != nil && !b.isChannel(f.Subscriber, p.Namespace, br.Channel) {
			r.Edges = append(r.Edges, b.edge(topology.Filter, f.Subscriber))
		}
		sub := b.subscriptions[p.Namespace+"/"+br.Subscription]
		if sub == nil {
			continue
		}
		if sub.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(topology.Subscriber, sub.Subscriber))
		}
		if sub.Reply != nil {
			r.Edges = append(r.Edges, b.edge(topology.Reply, sub.Reply))
		}
		r.Edges = b.deadLetter(sub.Delivery, r.Edges)
		b.route(r, describe(sub.Subscriber))
	}
}

func (b *tableGraph) countAs(id, counted string) {
	if b.countedAs == nil {
		b.countedAs = map[string]string{}
	}
	b.countedAs[id] = counted
}

// isChannel reports whether d is the address of the Channel
// namespace/name of the table.
func (b *tableGraph) isChannel(d *routing.Destination, namespace, name string) bool {
	ch := b.channels[namespace+"/"+name]
	return ch != nil && d.Ref == nil && ch.Address != "" && d.URI == ch.Address
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
	top := &view{graph: g, countedAs: b.countedAs}
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
