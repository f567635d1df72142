package routes

import (
	"cmp"
	"fmt"
	"net/url"
	"slices"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/flows"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
)

// IngressService is the Service in front of the runtime in each namespace
// that has Brokers or Channels knc runs.
const IngressService = "knc-ingress"

// ServesBroker reports whether knc runs Brokers of this class.
func ServesBroker(b *model.Broker) bool { return b.Class() == model.BrokerClassKnc }

// ServesChannel reports whether knc runs Channels with this template: its
// own kind, and InMemoryChannel, which knc makes durable.
func ServesChannel(c *model.Channel) bool {
	t := c.Spec.ChannelTemplate
	if t == nil {
		return true
	}
	return t.APIVersion == model.ChannelAPIVersionKnc && t.Kind == model.ChannelKindKnc ||
		t.APIVersion == knative.MessagingV1 && t.Kind == knative.KindInMemoryChannel
}

// Compiler resolves addresses against one project.
type Compiler struct {
	cfg  *project.Config
	set  *model.Set
	opts Options
}

// Options change how addresses resolve.
type Options struct {
	// Address, when set, is asked first for the address of every object a
	// reference names; knc run uses it to send events for in-cluster
	// Services to processes on the local machine.
	Address func(r *model.KReference) (string, bool)
}

// Compile builds the routing table of the Brokers and Channels knc runs,
// of the PingSources it fires, and of the other sources that send into
// them or elsewhere.
// The set must be valid; diagnostics report what still cannot be compiled.
func Compile(set *model.Set, cfg *project.Config) (*routing.Table, diag.List) {
	return CompileWith(set, cfg, Options{})
}

// CompileWith is Compile with options.
func CompileWith(set *model.Set, cfg *project.Config, opts Options) (*routing.Table, diag.List) {
	c := &Compiler{cfg: cfg, set: set, opts: opts}
	var diags diag.List
	t := &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind}
	triggers := map[model.Key][]*model.Trigger{}
	for _, tr := range set.Triggers {
		k := tr.BrokerKey()
		triggers[k] = append(triggers[k], tr)
	}
	subs := map[model.Key][]*model.Subscription{}
	for _, s := range set.Subscriptions {
		k := s.ChannelKey()
		subs[k] = append(subs[k], s)
	}
	for _, b := range set.Brokers {
		if !ServesBroker(b) {
			continue
		}
		entry := set.Index[model.KeyOf(b)]
		rb := routing.Broker{
			Source:  object(&b.Metadata, b),
			Path:    routing.BrokerPath(b.Metadata.Namespace, b.Metadata.Name),
			Address: c.ingressURL(b.Metadata.Namespace, routing.BrokerPath(b.Metadata.Namespace, b.Metadata.Name)),
		}
		rb.Delivery = c.delivery(entry, "spec.delivery", b.Spec.Delivery, &diags)
		for _, tr := range triggers[model.KeyOf(b)] {
			te := c.set.Index[model.KeyOf(tr)]
			rt := routing.Trigger{
				Source:           object(&tr.Metadata, tr),
				Subscriber:       c.destination(&tr.Spec.Subscriber),
				Delivery:         rb.Delivery,
				KeepDeadLettered: keepDeadLettered(&tr.Metadata, &b.Metadata),
			}
			if setsAny(tr.Spec.Delivery) {
				rt.Delivery = c.delivery(te, "spec.delivery", tr.Spec.Delivery, &diags)
			}
			if len(tr.Spec.Filters) > 0 {
				rt.Filters = filters(tr.Spec.Filters)
			} else if tr.Spec.Filter != nil && len(tr.Spec.Filter.Attributes) > 0 {
				rt.Attributes = tr.Spec.Filter.Attributes
			}
			rb.Triggers = append(rb.Triggers, rt)
		}
		slices.SortFunc(rb.Triggers, func(a, b routing.Trigger) int { return compareObjects(a.Source, b.Source) })
		t.Brokers = append(t.Brokers, rb)
	}
	for _, ch := range set.Channels {
		if !ServesChannel(ch) {
			continue
		}
		entry := set.Index[model.KeyOf(ch)]
		rc := routing.Channel{
			Source:  object(&ch.Metadata, ch),
			Path:    routing.ChannelPath(ch.Metadata.Namespace, ch.Metadata.Name),
			Address: c.ingressURL(ch.Metadata.Namespace, routing.ChannelPath(ch.Metadata.Namespace, ch.Metadata.Name)),
		}
		rc.Delivery = c.delivery(entry, "spec.delivery", ch.Spec.Delivery, &diags)
		for _, s := range subs[model.KeyOf(ch)] {
			se := c.set.Index[model.KeyOf(s)]
			rs := routing.Subscription{Source: object(&s.Metadata, s), Delivery: rc.Delivery, KeepDeadLettered: keepDeadLettered(&s.Metadata, &ch.Metadata)}
			if s.Spec.Subscriber != nil {
				d := c.destination(s.Spec.Subscriber)
				rs.Subscriber = &d
			}
			// An empty reply is no reply, as in Knative.
			if s.Spec.Reply != nil && (s.Spec.Reply.Ref != nil || s.Spec.Reply.URI != nil) {
				d := c.destination(s.Spec.Reply)
				rs.Reply = &d
			}
			if setsAny(s.Spec.Delivery) {
				rs.Delivery = c.delivery(se, "spec.delivery", s.Spec.Delivery, &diags)
			}
			rc.Subscriptions = append(rc.Subscriptions, rs)
		}
		slices.SortFunc(rc.Subscriptions, func(a, b routing.Subscription) int { return compareObjects(a.Source, b.Source) })
		t.Channels = append(t.Channels, rc)
	}
	for _, src := range set.Sources {
		if ps, ok := src.(*model.PingSource); ok {
			if ps.Spec.Sink != nil {
				t.PingSources = append(t.PingSources, c.pingSource(ps))
			}
			continue
		}
		if sink := src.GetSourceSpec().Sink; sink != nil && (sink.Ref != nil || sink.URI != nil) {
			t.Sources = append(t.Sources, c.eventSource(src))
		}
	}
	slices.SortFunc(t.PingSources, func(a, b routing.PingSource) int { return compareObjects(a.Source, b.Source) })
	slices.SortFunc(t.Sources, func(a, b routing.EventSource) int {
		return cmp.Or(compareObjects(a.Source, b.Source), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.APIVersion, b.APIVersion))
	})
	c.flows(t)
	slices.SortFunc(t.Brokers, func(a, b routing.Broker) int { return compareObjects(a.Source, b.Source) })
	slices.SortFunc(t.Channels, func(a, b routing.Channel) int { return compareObjects(a.Source, b.Source) })
	slices.SortFunc(t.Sequences, func(a, b routing.Sequence) int { return compareObjects(a.Source, b.Source) })
	slices.SortFunc(t.Parallels, func(a, b routing.Parallel) int { return compareObjects(a.Source, b.Source) })
	return t, diags
}

// keepDeadLettered is the effective knc.dev/keep-dead-lettered of a Trigger
// or Subscription: its own annotation when it has one, otherwise its Broker's
// or Channel's (parent).
func keepDeadLettered(target, parent *model.ObjectMeta) bool {
	if keep, set := model.KeepDeadLettered(target); set {
		return keep
	}
	keep, _ := model.KeepDeadLettered(parent)
	return keep
}

// pingSource is the entry of one PingSource. A sink that is a Broker or
// Channel knc runs is named by its path too, so that the runtime stores
// the events there directly, as its ingress would.
func (c *Compiler) pingSource(ps *model.PingSource) routing.PingSource {
	s := &ps.Spec
	out := routing.PingSource{
		Source:      object(&ps.Metadata, ps),
		Schedule:    cmp.Or(s.Schedule, model.DefaultPingSchedule),
		Timezone:    s.Timezone,
		ContentType: s.ContentType,
		Data:        s.Data,
		DataBase64:  s.DataBase64,
		Sink:        c.destination(s.Sink),
	}
	out.Extensions = extensions(s.CEOverrides)
	out.SinkPath = c.sinkPath(s.Sink)
	return out
}

// eventSource is the entry of a source of another kind, which the runtime
// does not run but draws, and knc test starts at.
func (c *Compiler) eventSource(src model.Source) routing.EventSource {
	tm, m, s := src.GetTypeMeta(), src.GetMetadata(), src.GetSourceSpec()
	return routing.EventSource{
		Source:     object(m, src),
		APIVersion: tm.APIVersion,
		Kind:       tm.Kind,
		Extensions: extensions(s.CEOverrides),
		Sink:       c.destination(s.Sink),
		SinkPath:   c.sinkPath(s.Sink),
	}
}

func extensions(o *model.CloudEventOverrides) map[string]string {
	if o == nil || len(o.Extensions) == 0 {
		return nil
	}
	return o.Extensions
}

// sinkPath is the path of the Broker or Channel knc runs that a sink
// names alone, empty for any other sink.
func (c *Compiler) sinkPath(sink *model.Destination) string {
	r := sink.Ref
	if r == nil || model.Str(sink.URI) != "" {
		return ""
	}
	key := model.Key{Group: model.Group(r.APIVersion), Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
	e, ok := c.set.Index[key]
	if !ok {
		return ""
	}
	switch o := e.Object.(type) {
	case *model.Broker:
		if ServesBroker(o) {
			return routing.BrokerPath(o.Metadata.Namespace, o.Metadata.Name)
		}
	case *model.Channel:
		if ServesChannel(o) {
			return routing.ChannelPath(o.Metadata.Namespace, o.Metadata.Name)
		}
	}
	return ""
}

// flows lists each Sequence and Parallel whose Channels knc runs with the
// Channels and Subscriptions the flows stage compiled it into, for the
// runtime to report its status. A flow of a channel class another
// implementation serves is that implementation's to report.
func (c *Compiler) flows(t *routing.Table) {
	served := func(ns, name string) bool {
		e, ok := c.set.Index[model.Key{Group: knative.GroupMessaging, Kind: knative.KindChannel, Namespace: ns, Name: name}]
		if !ok {
			return false
		}
		ch, ok := e.Object.(*model.Channel)
		return ok && e.Generated() && ServesChannel(ch)
	}
	for _, s := range c.set.Sequences {
		g := flows.Sequence(s)
		rs := routing.Sequence{Source: object(&s.Metadata, s)}
		for i := range g.Channels {
			rs.Channels = append(rs.Channels, g.Channels[i].Metadata.Name)
			rs.Subscriptions = append(rs.Subscriptions, g.Subscriptions[i].Metadata.Name)
		}
		if len(rs.Channels) > 0 && served(s.Metadata.Namespace, rs.Channels[0]) {
			t.Sequences = append(t.Sequences, rs)
		}
	}
	for _, p := range c.set.Parallels {
		name := p.Metadata.Name
		rp := routing.Parallel{Source: object(&p.Metadata, p), Channel: flows.ParallelChannelName(name)}
		for i := range p.Spec.Branches {
			rp.Branches = append(rp.Branches, routing.Branch{
				Channel:            flows.ParallelBranchChannelName(name, i),
				FilterSubscription: flows.ParallelFilterSubscriptionName(name, i),
				Subscription:       flows.ParallelSubscriptionName(name, i),
			})
		}
		if len(rp.Branches) > 0 && served(p.Metadata.Namespace, rp.Channel) {
			t.Parallels = append(t.Parallels, rp)
		}
	}
}

func compareObjects(a, b routing.Source) int {
	return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
}

func object(m *model.ObjectMeta, o model.Object) routing.Source {
	return routing.Source{Namespace: m.Namespace, Name: m.Name, Generation: m.Generation, SpecHash: model.SpecHash(model.Spec(o))}
}

func (c *Compiler) ingressURL(namespace, path string) string {
	return fmt.Sprintf("http://%s.%s.svc.%s%s", IngressService, namespace, c.cfg.ClusterDomain, path)
}

// Address returns the address of the object a reference names, when the
// repository or knc.yaml holds it.
func (c *Compiler) Address(r *model.KReference) (string, bool) {
	if c.opts.Address != nil {
		if url, ok := c.opts.Address(r); ok {
			return url, true
		}
	}
	key := model.Key{Group: model.Group(r.APIVersion), Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
	if e, ok := c.set.Index[key]; ok {
		switch o := e.Object.(type) {
		case *model.Broker:
			if ServesBroker(o) {
				return c.ingressURL(o.Metadata.Namespace, routing.BrokerPath(o.Metadata.Namespace, o.Metadata.Name)), true
			}
		case *model.Channel:
			if ServesChannel(o) {
				return c.ingressURL(o.Metadata.Namespace, routing.ChannelPath(o.Metadata.Namespace, o.Metadata.Name)), true
			}
		case *model.Sequence, *model.Parallel:
			// A flow's address is its ingress Channel's, as Knative's
			// controllers report it.
			if name, ok := flows.IngressChannel(o); ok {
				return c.Address(&model.KReference{APIVersion: knative.MessagingV1, Kind: knative.KindChannel, Namespace: key.Namespace, Name: name})
			}
		}
	}
	if r.APIVersion == "v1" && r.Kind == "Service" {
		// The control-plane contract gives a v1 Service this address.
		return fmt.Sprintf("http://%s.%s.svc.%s/", r.Name, r.Namespace, c.cfg.ClusterDomain), true
	}
	for _, e := range c.cfg.External {
		ns := e.Namespace
		if ns == "" {
			ns = c.cfg.DefaultNamespace
		}
		if e.URL != "" && e.APIVersion == r.APIVersion && e.Kind == r.Kind && e.Name == r.Name && ns == r.Namespace {
			return e.URL, true
		}
	}
	return "", false
}

// destination resolves what it can. A uri next to a ref is resolved
// relative to the ref's address, as the control-plane contract says.
func (c *Compiler) destination(d *model.Destination) routing.Destination {
	uri := model.Str(d.URI)
	if d.Ref == nil {
		return routing.Destination{URI: uri}
	}
	base, ok := c.Address(d.Ref)
	if !ok {
		return routing.Destination{URI: uri, Ref: &routing.Ref{APIVersion: d.Ref.APIVersion, Kind: d.Ref.Kind, Namespace: d.Ref.Namespace, Name: d.Ref.Name}}
	}
	if uri == "" {
		return routing.Destination{URI: base}
	}
	return routing.Destination{URI: ResolveRelative(base, uri)}
}

// ResolveRelative resolves uri against base, as a browser resolves a link.
func ResolveRelative(base, uri string) string {
	b, err := url.Parse(base)
	if err != nil {
		return uri
	}
	u, err := url.Parse(uri)
	if err != nil {
		return uri
	}
	return b.ResolveReference(u).String()
}

func (c *Compiler) delivery(entry *model.Entry, path string, d *model.DeliverySpec, diags *diag.List) *routing.Delivery {
	if d == nil {
		return nil
	}
	out := &routing.Delivery{BackoffPolicy: model.Str(d.BackoffPolicy), Format: model.Str(d.Format)}
	if d.Retry != nil {
		out.Retry = int32(*d.Retry)
	}
	for _, f := range []struct {
		field string
		iso   string
		dst   *routing.Duration
	}{{"backoffDelay", model.Str(d.BackoffDelay), &out.BackoffDelay}, {"timeout", model.Str(d.Timeout), &out.Timeout}, {"retryAfterMax", model.Str(d.RetryAfterMax), &out.RetryAfterMax}} {
		if f.iso == "" {
			continue
		}
		v, err := ParseDuration(f.iso)
		if err != nil {
			diags.Add(entry.Doc.PosOf(path+"."+f.field), path+"."+f.field, "%v", err)
			continue
		}
		// Knative admits a negative duration and waits no time at all;
		// the routing table holds no negative durations.
		*f.dst = routing.Duration(max(v, 0))
	}
	if d.DeadLetterSink != nil {
		dst := c.destination(d.DeadLetterSink)
		out.DeadLetterSink = &dst
	}
	return out
}

// setsAny reports whether d sets any field: a Trigger or Subscription that
// does uses its own delivery options and none of its Broker's or Channel's.
func setsAny(d *model.DeliverySpec) bool {
	return d != nil && *d != (model.DeliverySpec{})
}

func filters(in []model.SubscriptionsAPIFilter) []routing.Filter {
	out := make([]routing.Filter, 0, len(in))
	for i := range in {
		if f, ok := materialize(&in[i]); ok {
			out = append(out, f)
		}
	}
	return out
}

// materialize turns an entry into the one dialect Knative's dispatcher
// reads from it: the first with content, in the order exact, prefix,
// suffix, all, any, not, cesql. An entry with none filters nothing and is
// left out, as Knative leaves it out.
func materialize(f *model.SubscriptionsAPIFilter) (routing.Filter, bool) {
	switch {
	case len(f.Exact) > 0:
		return routing.Filter{Exact: f.Exact}, true
	case len(f.Prefix) > 0:
		return routing.Filter{Prefix: f.Prefix}, true
	case len(f.Suffix) > 0:
		return routing.Filter{Suffix: f.Suffix}, true
	case len(f.All) > 0:
		return nonEmptyList(filters(f.All), func(l []routing.Filter) routing.Filter { return routing.Filter{All: l} })
	case len(f.Any) > 0:
		return nonEmptyList(filters(f.Any), func(l []routing.Filter) routing.Filter { return routing.Filter{Any: l} })
	case f.Not != nil:
		inner, ok := materialize(f.Not)
		if !ok {
			// Knative's not of nothing passes every event.
			return routing.Filter{}, false
		}
		return routing.Filter{Not: &inner}, true
	case f.CESQL != nil && *f.CESQL != "":
		return routing.Filter{CESQL: *f.CESQL}, true
	}
	return routing.Filter{}, false
}

func nonEmptyList(l []routing.Filter, wrap func([]routing.Filter) routing.Filter) (routing.Filter, bool) {
	if len(l) == 0 {
		return routing.Filter{}, false
	}
	return wrap(l), true
}
