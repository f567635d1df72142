package status

import (
	"fmt"
	"strings"
	"time"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/resolve"
)

// Condition types.
const (
	ConditionReady                  = "Ready"
	ConditionAddressable            = "Addressable"
	ConditionIngressReady           = "IngressReady"
	ConditionBrokerReady            = "BrokerReady"
	ConditionSubscriberResolved     = "SubscriberResolved"
	ConditionDeadLetterSinkResolved = "DeadLetterSinkResolved"
	ConditionSubscribersReady       = "SubscribersReady"
	ConditionChannelReady           = "ChannelReady"
	ConditionReferencesResolved     = "ReferencesResolved"
	// A PingSource's, as Knative names them.
	ConditionSinkProvided = "SinkProvided"
	ConditionDeployed     = "Deployed"
	// A Sequence's and a Parallel's, as Knative's flows report them.
	ConditionChannelsReady      = "ChannelsReady"
	ConditionSubscriptionsReady = "SubscriptionsReady"
)

// Condition statuses.
const (
	True    = "True"
	False   = "False"
	Unknown = "Unknown"
)

// Condition is a Knative apis.Condition.
type Condition struct {
	Type   string `json:"type"`
	Status string `json:"status"`
	// Reason is one CamelCase word.
	Reason  string `json:"reason,omitempty"`
	Message string `json:"message,omitempty"`
	// Severity is empty for error conditions, which all of knc's are.
	Severity string `json:"severity,omitempty"`
	// LastTransitionTime is RFC 3339, in UTC, to the second.
	LastTransitionTime string `json:"lastTransitionTime,omitempty"`
}

// Report is one reported object: enough of a Kubernetes object to name it,
// and its status.
type Report struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Status     Status   `json:"status"`
}

// Metadata names the object of a Report.
type Metadata struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
}

// Status holds the status fields of all four kinds; each kind sets its own.
type Status struct {
	ObservedGeneration int64       `json:"observedGeneration"`
	Conditions         []Condition `json:"conditions"`
	// Address is set for Brokers and Channels.
	Address *Addressable `json:"address,omitempty"`
	// SubscriberURI is set for Triggers.
	SubscriberURI string `json:"subscriberUri,omitempty"`
	// DeadLetterSinkURI is set for Brokers, Triggers and Channels that have
	// a resolved dead-letter sink.
	DeadLetterSinkURI string `json:"deadLetterSinkUri,omitempty"`
	// PhysicalSubscription is set for Subscriptions.
	PhysicalSubscription *PhysicalSubscription `json:"physicalSubscription,omitempty"`
	// Subscribers is set for Channels, one entry per Subscription in the
	// table's order.
	Subscribers []SubscriberStatus `json:"subscribers,omitempty"`
	// SinkURI and CloudEventAttributes are set for PingSources.
	SinkURI              string                 `json:"sinkUri,omitempty"`
	CloudEventAttributes []CloudEventAttributes `json:"ceAttributes,omitempty"`
	// ChannelStatuses and SubscriptionStatuses are set for Sequences, one
	// per step.
	ChannelStatuses      []ChannelStatus      `json:"channelStatuses,omitempty"`
	SubscriptionStatuses []SubscriptionStatus `json:"subscriptionStatuses,omitempty"`
	// IngressChannelStatus and BranchStatuses are set for Parallels.
	IngressChannelStatus *ChannelStatus `json:"ingressChannelStatus,omitempty"`
	BranchStatuses       []BranchStatus `json:"branchStatuses,omitempty"`
}

// ObjectReference names one of the Channels or Subscriptions a Sequence
// or Parallel is made of, as corev1.ObjectReference does.
type ObjectReference struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// ChannelStatus is the Ready condition of one Channel of a flow.
type ChannelStatus struct {
	Channel ObjectReference `json:"channel"`
	Ready   Condition       `json:"ready"`
}

// SubscriptionStatus is the Ready condition of one Subscription of a flow.
type SubscriptionStatus struct {
	Subscription ObjectReference `json:"subscription"`
	Ready        Condition       `json:"ready"`
}

// BranchStatus is one branch of a Parallel: its filter Subscription, the
// branch's Channel, and its subscriber Subscription.
type BranchStatus struct {
	FilterSubscriptionStatus SubscriptionStatus `json:"filterSubscriptionStatus"`
	FilterChannelStatus      ChannelStatus      `json:"filterChannelStatus"`
	SubscriptionStatus       SubscriptionStatus `json:"subscriberSubscriptionStatus"`
}

// CloudEventAttributes names the type and source of the events a source
// sends.
type CloudEventAttributes struct {
	Type   string `json:"type"`
	Source string `json:"source"`
}

// Addressable is duckv1.Addressable.
type Addressable struct {
	URL string `json:"url"`
}

// PhysicalSubscription holds a Subscription's resolved URIs.
type PhysicalSubscription struct {
	SubscriberURI     string `json:"subscriberUri,omitempty"`
	ReplyURI          string `json:"replyUri,omitempty"`
	DeadLetterSinkURI string `json:"deadLetterSinkUri,omitempty"`
}

// SubscriberStatus reports whether a Channel's data plane serves one of its
// Subscriptions.
type SubscriberStatus struct {
	UID                string `json:"uid,omitempty"`
	ObservedGeneration int64  `json:"observedGeneration,omitempty"`
	Ready              string `json:"ready"`
	Message            string `json:"message,omitempty"`
}

// Ingress is how far the data plane has got serving one Broker or Channel.
type Ingress struct {
	// Ready means events sent to the address are stored, and the consumers
	// that route and deliver them exist.
	Ready bool
	// Reason and Message explain a Ready of false; an empty Reason means
	// the ingress is still being set up (Unknown).
	Reason, Message string
}

// Input is what Compute reports on.
type Input struct {
	Table *routing.Table
	// BaseURL is the URL of the listener serving the table's paths
	// ("http://127.0.0.1:8080"); each address is BaseURL plus the path. When
	// empty, the table's own Address fields are reported.
	BaseURL string
	// Resolved holds the resolution of every Destination of Table.
	Resolved resolve.Results
	// Ingress reports the data plane of a Broker (kind knative.KindBroker) or
	// Channel; nil means nothing is set up yet.
	Ingress func(kind string, o routing.Source) Ingress
	// Ping reports whether the runtime fires a PingSource: Ready once it
	// is scheduled. nil means nothing is scheduled yet.
	Ping func(o routing.Source) Ingress
	// Previous is the status last reported, for lastTransitionTime.
	Previous []Report
	// Now stamps the conditions whose status changed.
	Now time.Time
}

// Compute returns one Report per Broker, Trigger, Channel, Subscription,
// PingSource, Sequence and Parallel of the table: each Broker followed by
// its Triggers, then each Channel followed by its Subscriptions, then the
// PingSources, then the Sequences and the Parallels, whose status sums up
// their parts'.
func Compute(in Input) []Report {
	c := computer{in: in, previous: map[objectKey]*Report{}}
	for i := range in.Previous {
		p := &in.Previous[i]
		c.previous[objectKey{p.Kind, p.Metadata.Namespace, p.Metadata.Name}] = p
	}
	var out []Report
	if in.Table == nil {
		return out
	}
	for i := range in.Table.Brokers {
		b := &in.Table.Brokers[i]
		bo := c.broker(b)
		out = append(out, bo)
		brokerReady := ready(bo.Status.Conditions)
		for j := range b.Triggers {
			out = append(out, c.trigger(b, &b.Triggers[j], brokerReady))
		}
	}
	for i := range in.Table.Channels {
		ch := &in.Table.Channels[i]
		subs := make([]Report, len(ch.Subscriptions))
		for j := range ch.Subscriptions {
			subs[j] = c.subscriptionOwn(ch, &ch.Subscriptions[j])
		}
		co := c.channel(ch, subs)
		out = append(out, co)
		channelReady := ready(co.Status.Conditions)
		for j := range subs {
			out = append(out, c.finishSubscription(ch, subs[j], channelReady))
		}
	}
	for i := range in.Table.PingSources {
		out = append(out, c.pingSource(&in.Table.PingSources[i]))
	}
	parts := map[objectKey]*Report{}
	for i := range out {
		o := &out[i]
		parts[objectKey{o.Kind, o.Metadata.Namespace, o.Metadata.Name}] = o
	}
	for i := range in.Table.Sequences {
		out = append(out, c.sequence(&in.Table.Sequences[i], parts))
	}
	for i := range in.Table.Parallels {
		out = append(out, c.parallel(&in.Table.Parallels[i], parts))
	}
	return out
}

// pingSource reports a PingSource with the conditions Knative's
// reconciler sets: SinkProvided (False with reason NotFound when the sink
// does not resolve), and Deployed, which here says whether the runtime
// fires it.
func (c *computer) pingSource(ps *routing.PingSource) Report {
	obj := c.object(knative.SourcesV1, knative.KindPingSource, ps.Source)
	var conds []Condition
	res, ok := c.in.Resolved.Lookup(knative.KindPingSource, ps.Source, resolve.FieldSink)
	if ps.SinkPath != "" {
		// A Broker or Channel of the table: its address as its own
		// status reports it.
		res, ok = resolve.Result{URL: c.address(ps.SinkPath, ps.Sink.URI)}, true
	}
	switch {
	case !ok:
		conds = append(conds, Condition{Type: ConditionSinkProvided, Status: Unknown, Reason: "Resolving",
			Message: "the sink is not resolved yet"})
	case res.Err != nil:
		conds = append(conds, Condition{Type: ConditionSinkProvided, Status: False, Reason: "NotFound",
			Message: fmt.Sprintf("sink not found: %v", res.Err)})
	default:
		obj.Status.SinkURI = res.URL
		conds = append(conds, Condition{Type: ConditionSinkProvided, Status: True, Reason: "SinkProvided", Message: res.URL})
	}
	var fired Ingress
	if c.in.Ping != nil {
		fired = c.in.Ping(ps.Source)
	}
	zone := ps.Timezone
	if zone == "" {
		zone = "UTC"
	}
	switch {
	case fired.Ready:
		conds = append(conds, Condition{Type: ConditionDeployed, Status: True, Reason: "Deployed",
			Message: fmt.Sprintf("the runtime fires it on schedule %q in time zone %s", ps.Schedule, zone)})
	case fired.Reason == "":
		conds = append(conds, Condition{Type: ConditionDeployed, Status: Unknown, Reason: "Provisioning",
			Message: "the runtime is not firing it yet"})
	default:
		conds = append(conds, Condition{Type: ConditionDeployed, Status: False, Reason: fired.Reason, Message: fired.Message})
	}
	obj.Status.CloudEventAttributes = []CloudEventAttributes{{Type: knative.PingSourceEventType, Source: knative.PingSourceEventSource(ps.Namespace, ps.Name)}}
	c.finish(&obj, conds)
	return obj
}

type objectKey struct{ kind, namespace, name string }

type computer struct {
	in       Input
	previous map[objectKey]*Report
}

func (c *computer) object(apiVersion, kind string, o routing.Source) Report {
	gen := o.Generation
	if gen == 0 {
		gen = 1
	}
	return Report{
		APIVersion: apiVersion,
		Kind:       kind,
		Metadata:   Metadata{Namespace: o.Namespace, Name: o.Name},
		Status:     Status{ObservedGeneration: gen},
	}
}

func (c *computer) address(path, tableAddress string) string {
	if c.in.BaseURL != "" {
		return strings.TrimSuffix(c.in.BaseURL, "/") + path
	}
	return tableAddress
}

func (c *computer) ingress(kind string, o routing.Source) Condition {
	var ing Ingress
	if c.in.Ingress != nil {
		ing = c.in.Ingress(kind, o)
	}
	switch {
	case ing.Ready:
		return Condition{Type: ConditionIngressReady, Status: True, Reason: "IngressReady",
			Message: "events sent to the address are stored and routed"}
	case ing.Reason == "":
		return Condition{Type: ConditionIngressReady, Status: Unknown, Reason: "Provisioning",
			Message: "the streams and consumers are being set up"}
	default:
		return Condition{Type: ConditionIngressReady, Status: False, Reason: ing.Reason, Message: ing.Message}
	}
}

func addressable(url string) Condition {
	if url == "" {
		return Condition{Type: ConditionAddressable, Status: False, Reason: "NoAddress",
			Message: "no address is known for this object"}
	}
	return Condition{Type: ConditionAddressable, Status: True, Reason: "AddressSet", Message: url}
}

// resolvedCondition reports one Destination of an object; ok is false when
// the object has no such Destination.
func (c *computer) resolvedCondition(condType, kind string, o routing.Source, field string) (Condition, string, bool) {
	res, ok := c.in.Resolved.Lookup(kind, o, field)
	if !ok {
		return Condition{}, "", false
	}
	if res.Err != nil {
		return Condition{Type: condType, Status: False, Reason: "Unresolved",
			Message: fmt.Sprintf("%s: %v", field, res.Err)}, "", true
	}
	return Condition{Type: condType, Status: True, Reason: "Resolved", Message: res.URL}, res.URL, true
}

func (c *computer) broker(b *routing.Broker) Report {
	obj := c.object(knative.EventingV1, knative.KindBroker, b.Source)
	url := c.address(b.Path, b.Address)
	if url != "" {
		obj.Status.Address = &Addressable{URL: url}
	}
	conds := []Condition{addressable(url), c.ingress(knative.KindBroker, b.Source)}
	if cond, uri, ok := c.resolvedCondition(ConditionDeadLetterSinkResolved, knative.KindBroker, b.Source, resolve.FieldDeadLetterSink); ok {
		conds = append(conds, cond)
		obj.Status.DeadLetterSinkURI = uri
	}
	c.finish(&obj, conds)
	return obj
}

func (c *computer) trigger(b *routing.Broker, t *routing.Trigger, brokerReady Condition) Report {
	obj := c.object(knative.EventingV1, knative.KindTrigger, t.Source)
	var conds []Condition
	switch brokerReady.Status {
	case True:
		conds = append(conds, Condition{Type: ConditionBrokerReady, Status: True, Reason: "BrokerReady",
			Message: "broker " + b.Key() + " is ready"})
	default:
		reason := "BrokerNotReady"
		if brokerReady.Status == Unknown {
			reason = "BrokerProvisioning"
		}
		conds = append(conds, Condition{Type: ConditionBrokerReady, Status: brokerReady.Status, Reason: reason,
			Message: fmt.Sprintf("broker %s: %s", b.Key(), brokerReady.Message)})
	}
	if cond, uri, ok := c.resolvedCondition(ConditionSubscriberResolved, knative.KindTrigger, t.Source, resolve.FieldSubscriber); ok {
		conds = append(conds, cond)
		obj.Status.SubscriberURI = uri
	}
	if cond, uri, ok := c.resolvedCondition(ConditionDeadLetterSinkResolved, knative.KindTrigger, t.Source, resolve.FieldDeadLetterSink); ok {
		conds = append(conds, cond)
		obj.Status.DeadLetterSinkURI = uri
	}
	c.finish(&obj, conds)
	return obj
}

// subscriptionOwn computes the conditions of a Subscription that do not
// depend on its Channel: ReferencesResolved, and the data plane's
// programming, which the Channel reports in its subscribers.
func (c *computer) subscriptionOwn(ch *routing.Channel, s *routing.Subscription) Report {
	obj := c.object(knative.MessagingV1, knative.KindSubscription, s.Source)
	phys := &PhysicalSubscription{}
	var problems []string
	for _, field := range []string{resolve.FieldSubscriber, resolve.FieldReply, resolve.FieldDeadLetterSink} {
		res, ok := c.in.Resolved.Lookup(knative.KindSubscription, s.Source, field)
		if !ok {
			continue
		}
		if res.Err != nil {
			problems = append(problems, fmt.Sprintf("%s: %v", field, res.Err))
			continue
		}
		switch field {
		case resolve.FieldSubscriber:
			phys.SubscriberURI = res.URL
		case resolve.FieldReply:
			phys.ReplyURI = res.URL
		case resolve.FieldDeadLetterSink:
			phys.DeadLetterSinkURI = res.URL
		}
	}
	obj.Status.PhysicalSubscription = phys
	refs := Condition{Type: ConditionReferencesResolved, Status: True, Reason: "Resolved",
		Message: "subscriber, reply and dead-letter sink are resolved"}
	if len(problems) > 0 {
		refs = Condition{Type: ConditionReferencesResolved, Status: False, Reason: "Unresolved",
			Message: strings.Join(problems, "; ")}
	}
	obj.Status.Conditions = []Condition{refs}
	return obj
}

func (c *computer) channel(ch *routing.Channel, subs []Report) Report {
	obj := c.object(knative.MessagingV1, knative.KindChannel, ch.Source)
	url := c.address(ch.Path, ch.Address)
	if url != "" {
		obj.Status.Address = &Addressable{URL: url}
	}
	ingress := c.ingress(knative.KindChannel, ch.Source)
	conds := []Condition{addressable(url), ingress}
	if cond, uri, ok := c.resolvedCondition(ConditionDeadLetterSinkResolved, knative.KindChannel, ch.Source, resolve.FieldDeadLetterSink); ok {
		conds = append(conds, cond)
		obj.Status.DeadLetterSinkURI = uri
	}
	subscribers := Condition{Type: ConditionSubscribersReady, Status: True, Reason: "SubscribersReady",
		Message: fmt.Sprintf("%d of %d subscriptions are ready", len(subs), len(subs))}
	var notReady []string
	for i := range subs {
		s := &ch.Subscriptions[i]
		refs := subs[i].Status.Conditions[0]
		gen := s.Generation
		if gen == 0 {
			gen = 1
		}
		st := SubscriberStatus{ObservedGeneration: gen}
		switch {
		case refs.Status != True:
			st.Ready, st.Message = False, refs.Message
			notReady = append(notReady, fmt.Sprintf("subscription %s: %s", s.Key(), refs.Message))
		case ingress.Status != True:
			st.Ready, st.Message = ingress.Status, ingress.Message
		default:
			st.Ready, st.Message = True, "the channel delivers to this subscription"
		}
		obj.Status.Subscribers = append(obj.Status.Subscribers, st)
	}
	if len(notReady) > 0 {
		subscribers = Condition{Type: ConditionSubscribersReady, Status: False, Reason: "SubscribersNotReady",
			Message: fmt.Sprintf("%d of %d subscriptions are not ready: %s", len(notReady), len(subs), strings.Join(notReady, "; "))}
	}
	conds = append(conds, subscribers)
	c.finish(&obj, conds)
	return obj
}

func (c *computer) finishSubscription(ch *routing.Channel, obj Report, channelReady Condition) Report {
	var chCond Condition
	switch channelReady.Status {
	case True:
		chCond = Condition{Type: ConditionChannelReady, Status: True, Reason: "ChannelReady",
			Message: "channel " + ch.Key() + " is ready"}
	default:
		reason := "ChannelNotReady"
		if channelReady.Status == Unknown {
			reason = "ChannelProvisioning"
		}
		chCond = Condition{Type: ConditionChannelReady, Status: channelReady.Status, Reason: reason,
			Message: fmt.Sprintf("channel %s: %s", ch.Key(), channelReady.Message)}
	}
	// The Subscription's own problem, if any, is the more useful reason for
	// Ready: a Channel is not ready when one of its Subscriptions is not.
	conds := append(obj.Status.Conditions, chCond)
	obj.Status.Conditions = nil
	c.finish(&obj, conds)
	return obj
}

// part is a Channel or Subscription of a flow: its reference, its Ready
// condition, and its address for a Channel.
type part struct {
	ref     ObjectReference
	ready   Condition
	address *Addressable
}

func (c *computer) part(parts map[objectKey]*Report, kind, namespace, name string) part {
	p := part{ref: ObjectReference{APIVersion: knative.MessagingV1, Kind: kind, Namespace: namespace, Name: name}}
	r := parts[objectKey{kind, namespace, name}]
	if r == nil {
		p.ready = Condition{Type: ConditionReady, Status: Unknown, Reason: "NoReady",
			Message: fmt.Sprintf("%s %s/%s is not served", strings.ToLower(kind), namespace, name)}
		return p
	}
	p.ready = ready(r.Status.Conditions)
	p.address = r.Status.Address
	return p
}

// partsReady sums up the Ready conditions of a flow's Channels or
// Subscriptions (what, in the plural) into condType: True when all are,
// else False when one is, else Unknown, naming those that are not.
func partsReady(condType, what string, ps []part) Condition {
	status := True
	var notReady []string
	for _, p := range ps {
		if p.ready.Status == True {
			continue
		}
		if status != False {
			status = p.ready.Status
		}
		notReady = append(notReady, fmt.Sprintf("%s %s: %s", strings.ToLower(p.ref.Kind), p.ref.Name, p.ready.Message))
	}
	name := strings.ToUpper(what[:1]) + what[1:]
	if status == True {
		return Condition{Type: condType, Status: True, Reason: name + "Ready", Message: fmt.Sprintf("%d of %d %s are ready", len(ps), len(ps), what)}
	}
	return Condition{Type: condType, Status: status, Reason: name + "NotReady",
		Message: fmt.Sprintf("%d of %d %s are not ready: %s", len(notReady), len(ps), what, strings.Join(notReady, "; "))}
}

// flowAddress is the Addressable condition of a flow whose address is its
// ingress Channel's, and sets status.address.
func flowAddress(obj *Report, ingress part) Condition {
	if ingress.address == nil || ingress.address.URL == "" {
		return Condition{Type: ConditionAddressable, Status: Unknown, Reason: "EmptyAddress",
			Message: "channel " + ingress.ref.Name + " has no address yet"}
	}
	a := *ingress.address
	obj.Status.Address = &a
	return addressable(a.URL)
}

func (c *computer) sequence(s *routing.Sequence, parts map[objectKey]*Report) Report {
	obj := c.object(knative.FlowsV1, knative.KindSequence, s.Source)
	var chs, subs []part
	for _, name := range s.Channels {
		p := c.part(parts, knative.KindChannel, s.Namespace, name)
		chs = append(chs, p)
		obj.Status.ChannelStatuses = append(obj.Status.ChannelStatuses, ChannelStatus{Channel: p.ref, Ready: p.ready})
	}
	for _, name := range s.Subscriptions {
		p := c.part(parts, knative.KindSubscription, s.Namespace, name)
		subs = append(subs, p)
		obj.Status.SubscriptionStatuses = append(obj.Status.SubscriptionStatuses, SubscriptionStatus{Subscription: p.ref, Ready: p.ready})
	}
	conds := []Condition{
		partsReady(ConditionChannelsReady, "channels", chs),
		partsReady(ConditionSubscriptionsReady, "subscriptions", subs),
	}
	if len(chs) > 0 {
		conds = append(conds, flowAddress(&obj, chs[0]))
	}
	c.finish(&obj, conds)
	return obj
}

func (c *computer) parallel(p *routing.Parallel, parts map[objectKey]*Report) Report {
	obj := c.object(knative.FlowsV1, knative.KindParallel, p.Source)
	ingress := c.part(parts, knative.KindChannel, p.Namespace, p.Channel)
	obj.Status.IngressChannelStatus = &ChannelStatus{Channel: ingress.ref, Ready: ingress.ready}
	chs := []part{ingress}
	var subs []part
	for _, b := range p.Branches {
		filter := c.part(parts, knative.KindSubscription, p.Namespace, b.FilterSubscription)
		ch := c.part(parts, knative.KindChannel, p.Namespace, b.Channel)
		sub := c.part(parts, knative.KindSubscription, p.Namespace, b.Subscription)
		chs = append(chs, ch)
		subs = append(subs, filter, sub)
		obj.Status.BranchStatuses = append(obj.Status.BranchStatuses, BranchStatus{
			FilterSubscriptionStatus: SubscriptionStatus{Subscription: filter.ref, Ready: filter.ready},
			FilterChannelStatus:      ChannelStatus{Channel: ch.ref, Ready: ch.ready},
			SubscriptionStatus:       SubscriptionStatus{Subscription: sub.ref, Ready: sub.ready},
		})
	}
	conds := []Condition{
		partsReady(ConditionChannelsReady, "channels", chs),
		partsReady(ConditionSubscriptionsReady, "subscriptions", subs),
		flowAddress(&obj, ingress),
	}
	c.finish(&obj, conds)
	return obj
}

// finish adds Ready, summarising conds, and stamps transition times.
func (c *computer) finish(obj *Report, conds []Condition) {
	all := append([]Condition{Summary(obj.Kind, conds)}, conds...)
	prev := c.previous[objectKey{obj.Kind, obj.Metadata.Namespace, obj.Metadata.Name}]
	stamp := c.in.Now.UTC().Truncate(time.Second).Format(time.RFC3339)
	for i := range all {
		all[i].LastTransitionTime = stamp
		if prev == nil {
			continue
		}
		for _, p := range prev.Status.Conditions {
			if p.Type == all[i].Type && p.Status == all[i].Status && p.LastTransitionTime != "" {
				all[i].LastTransitionTime = p.LastTransitionTime
			}
		}
	}
	obj.Status.Conditions = all
}

// Summary returns the Ready condition of an object of kind whose other
// conditions are conds: the first False, else the first Unknown, else True.
// Conditions with a severity are informational and never make it not
// ready.
func Summary(kind string, conds []Condition) Condition {
	summary := Condition{Type: ConditionReady, Status: True, Reason: "Ready",
		Message: strings.ToLower(kind) + " is ready"}
	for _, cond := range conds {
		if cond.Severity != "" || cond.Status == True {
			continue
		}
		// The first False wins over any Unknown; the first Unknown is kept
		// only while no False is seen.
		if summary.Status == True || (summary.Status == Unknown && cond.Status == False) {
			summary = Condition{Type: ConditionReady, Status: cond.Status, Reason: cond.Reason, Message: cond.Message}
		}
	}
	return summary
}

// ready returns the Ready condition of conds.
func ready(conds []Condition) Condition {
	for _, c := range conds {
		if c.Type == ConditionReady {
			return c
		}
	}
	return Condition{Type: ConditionReady, Status: Unknown}
}

// Find returns the object of kind, namespace and name in objs, or nil.
func Find(objs []Report, kind, namespace, name string) *Report {
	for i := range objs {
		o := &objs[i]
		if o.Kind == kind && o.Metadata.Namespace == namespace && o.Metadata.Name == name {
			return o
		}
	}
	return nil
}

// ConditionOf returns the condition of type condType of o, or nil.
func (o *Report) ConditionOf(condType string) *Condition {
	for i := range o.Status.Conditions {
		if o.Status.Conditions[i].Type == condType {
			return &o.Status.Conditions[i]
		}
	}
	return nil
}
