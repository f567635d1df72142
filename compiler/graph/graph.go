package graph

import (
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// Build draws the topology of a checked set. The table, compiled from the
// same set, supplies the addresses knc resolved; nil leaves them out.
func Build(set *model.Set, table *routing.Table) *topology.Graph {
	b := &builder{
		sources:  map[string]*topology.Source{},
		sinks:    map[string]*topology.Sink{},
		resolved: resolvedAddresses(table),
	}
	for _, br := range set.Brokers {
		s := b.source(topology.KindBroker, knative.GroupEventing, br.Metadata.Namespace, br.Metadata.Name)
		s.Class, s.External = br.Class(), false
		s.Served = s.Class == model.BrokerClassKnc
		if br.Spec.Delivery != nil && br.Spec.Delivery.DeadLetterSink != nil {
			s.Edges = append(s.Edges, b.edge(topology.DeadLetter, br.Spec.Delivery.DeadLetterSink, b.resolved[s.ID+"#dls"]))
		}
		s.Address = b.resolved[s.ID]
	}
	// A Sequence or Parallel is drawn as its steps and branches, not as
	// the Channels and Subscriptions the flows stage compiled it into.
	generated := func(o model.Object) bool {
		e := set.Index[model.KeyOf(o)]
		return e != nil && e.Generated()
	}
	for _, ch := range set.Channels {
		if generated(ch) {
			continue
		}
		s := b.source(topology.KindChannel, knative.GroupMessaging, ch.Metadata.Namespace, ch.Metadata.Name)
		s.External = false
		if t := ch.Spec.ChannelTemplate; t != nil {
			s.Class = t.Kind
		}
		_, s.Served = b.resolved[s.ID]
		s.Address = b.resolved[s.ID]
		if ch.Spec.Delivery != nil && ch.Spec.Delivery.DeadLetterSink != nil {
			s.Edges = append(s.Edges, b.edge(topology.DeadLetter, ch.Spec.Delivery.DeadLetterSink, b.resolved[s.ID+"#dls"]))
		}
	}
	for _, tr := range set.Triggers {
		src := b.source(topology.KindBroker, knative.GroupEventing, tr.Metadata.Namespace, tr.Spec.Broker)
		r := &topology.Route{ID: nodeID(topology.KindTrigger, knative.GroupEventing, tr.Metadata.Namespace, tr.Metadata.Name), Kind: topology.KindTrigger, Namespace: tr.Metadata.Namespace, Name: tr.Metadata.Name}
		r.Filter = TriggerFilter(tr)
		r.Edges = append(r.Edges, b.edge(topology.Subscriber, &tr.Spec.Subscriber, b.resolved[r.ID+"#subscriber"]))
		if tr.Spec.Delivery != nil && tr.Spec.Delivery.DeadLetterSink != nil {
			r.Edges = append(r.Edges, b.edge(topology.DeadLetter, tr.Spec.Delivery.DeadLetterSink, b.resolved[r.ID+"#dls"]))
		}
		src.Routes = append(src.Routes, r)
	}
	for _, sub := range set.Subscriptions {
		if generated(sub) {
			continue
		}
		ch := sub.ChannelKey()
		src := b.source(ch.Kind, ch.Group, ch.Namespace, ch.Name)
		r := &topology.Route{ID: nodeID(topology.KindSubscription, knative.GroupMessaging, sub.Metadata.Namespace, sub.Metadata.Name), Kind: topology.KindSubscription, Namespace: sub.Metadata.Namespace, Name: sub.Metadata.Name}
		if sub.Spec.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(topology.Subscriber, sub.Spec.Subscriber, b.resolved[r.ID+"#subscriber"]))
		}
		if sub.Spec.Reply != nil {
			r.Edges = append(r.Edges, b.edge(topology.Reply, sub.Spec.Reply, b.resolved[r.ID+"#reply"]))
		}
		if sub.Spec.Delivery != nil && sub.Spec.Delivery.DeadLetterSink != nil {
			r.Edges = append(r.Edges, b.edge(topology.DeadLetter, sub.Spec.Delivery.DeadLetterSink, b.resolved[r.ID+"#dls"]))
		}
		src.Routes = append(src.Routes, r)
	}
	for _, src := range set.Sources {
		b.producer(src)
	}
	for _, seq := range set.Sequences {
		b.sequence(seq)
	}
	for _, par := range set.Parallels {
		b.parallel(par)
	}
	return topology.Assemble(b.sources, b.sinks)
}

// producer draws an event source feeding its sink.
func (b *builder) producer(src model.Source) {
	tm, m := src.GetTypeMeta(), src.GetMetadata()
	s := b.source(tm.Kind, model.Group(tm.APIVersion), m.Namespace, m.Name)
	s.External = false
	if sink := src.GetSourceSpec().Sink; sink != nil && (sink.Ref != nil || sink.URI != nil) {
		s.Edges = append(s.Edges, b.edge(topology.SinkOf, sink, ""))
	}
}

// sequence draws a Sequence with one route per step, in order, each
// delivering to its step; the last step's reply goes to the Sequence's
// reply.
func (b *builder) sequence(seq *model.Sequence) {
	ns := seq.Metadata.Namespace
	s := b.source(model.KindSequence, model.GroupFlows, ns, seq.Metadata.Name)
	s.External = false
	s.Class = channelClass(seq.Spec.ChannelTemplate)
	for i := range seq.Spec.Steps {
		r := topology.AddPart(s, topology.KindStep, i, len(seq.Spec.Steps))
		r.Edges = append(r.Edges, b.edge(topology.Subscriber, &seq.Spec.Steps[i].Destination, ""))
		if d := seq.Spec.Steps[i].Delivery; d != nil && d.DeadLetterSink != nil {
			r.Edges = append(r.Edges, b.edge(topology.DeadLetter, d.DeadLetterSink, ""))
		}
		if i == len(seq.Spec.Steps)-1 && seq.Spec.Reply != nil {
			r.Edges = append(r.Edges, b.edge(topology.Reply, seq.Spec.Reply, ""))
		}
	}
}

// parallel draws a Parallel with one route per branch, each with its
// filter, its subscriber and its reply (the branch's own, or else the
// Parallel's).
func (b *builder) parallel(par *model.Parallel) {
	ns := par.Metadata.Namespace
	s := b.source(model.KindParallel, model.GroupFlows, ns, par.Metadata.Name)
	s.External = false
	s.Class = channelClass(par.Spec.ChannelTemplate)
	for i, br := range par.Spec.Branches {
		r := topology.AddPart(s, topology.KindBranch, i, len(par.Spec.Branches))
		if br.Filter != nil {
			r.Edges = append(r.Edges, b.edge(topology.Filter, br.Filter, ""))
		}
		if br.Subscriber != nil {
			r.Edges = append(r.Edges, b.edge(topology.Subscriber, br.Subscriber, ""))
		}
		reply := br.Reply
		if reply == nil {
			reply = par.Spec.Reply
		}
		if reply != nil {
			r.Edges = append(r.Edges, b.edge(topology.Reply, reply, ""))
		}
		if br.Delivery != nil && br.Delivery.DeadLetterSink != nil {
			r.Edges = append(r.Edges, b.edge(topology.DeadLetter, br.Delivery.DeadLetterSink, ""))
		}
	}
}

func channelClass(t *model.ChannelTemplateSpec) string {
	if t == nil {
		return ""
	}
	return t.Kind
}

type builder struct {
	sources map[string]*topology.Source
	sinks   map[string]*topology.Sink
	// resolved maps node IDs (and ID#role for destinations) to the
	// addresses in the routing table.
	resolved map[string]string
}

// nodeID names a node by its object. Brokers and Channels of Knative's own
// groups are named by kind alone, which keeps IDs short in the output.
func nodeID(kind, group, namespace, name string) string {
	return knative.KindLabel(group, kind) + "/" + namespace + "/" + name
}

// source returns the source node of an object, creating an external one
// when the set does not (yet) define it.
func (b *builder) source(kind, group, namespace, name string) *topology.Source {
	id := nodeID(kind, group, namespace, name)
	if s, ok := b.sources[id]; ok {
		return s
	}
	s := &topology.Source{ID: id, Kind: kind, Namespace: namespace, Name: name, External: true}
	b.sources[id] = s
	return s
}

// edge makes the edge to a destination. A graph is shown and shared: the
// password and query values of every URI are masked (package redact).
func (b *builder) edge(role topology.Role, d *model.Destination, resolved string) *topology.Edge {
	uri := redact.URI(model.Str(d.URI))
	e := &topology.Edge{Role: role, URI: redact.URI(resolved)}
	if d.Ref == nil {
		e.To = "uri:" + uri
		if e.URI == "" {
			e.URI = uri
		}
		if _, ok := b.sinks[e.To]; !ok {
			s := &topology.Sink{ID: e.To, Kind: topology.KindURI, URI: uri}
			b.sinks[e.To] = s
		}
		return e
	}
	e.Path = uri
	e.To = nodeID(d.Ref.Kind, model.Group(d.Ref.APIVersion), d.Ref.Namespace, d.Ref.Name)
	return e
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
		id := nodeID(topology.KindBroker, "", b.Namespace, b.Name)
		m[id] = b.Address
		dls(id, b.Delivery)
		for _, tr := range b.Triggers {
			tid := nodeID(topology.KindTrigger, "", tr.Namespace, tr.Name)
			put(tid+"#subscriber", &tr.Subscriber)
			// The table holds the effective delivery; only the Trigger's
			// own dead-letter sink is drawn at the Trigger.
			dls(tid, tr.Delivery)
		}
	}
	for _, c := range t.Channels {
		id := nodeID(topology.KindChannel, "", c.Namespace, c.Name)
		m[id] = c.Address
		dls(id, c.Delivery)
		for _, s := range c.Subscriptions {
			sid := nodeID(topology.KindSubscription, "", s.Namespace, s.Name)
			put(sid+"#subscriber", s.Subscriber)
			put(sid+"#reply", s.Reply)
			dls(sid, s.Delivery)
		}
	}
	return m
}
