package cluster

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/status"
)

// Reasons that only cluster mode reports.
const (
	// ReasonNotCompiled: the live spec is not the one in the routing table
	// (edited by hand, or applied without building), or the object is not
	// in the table at all. The runtime serves what it compiled.
	ReasonNotCompiled = "NotCompiled"
	// ReasonBrokerDoesNotExist and ReasonChannelDoesNotExist: the Broker
	// of a Trigger, or the Channel of a Subscription, is not in the
	// cluster.
	ReasonBrokerDoesNotExist  = "BrokerDoesNotExist"
	ReasonChannelDoesNotExist = "ChannelDoesNotExist"
)

// Names knc's compiler writes into the objects it runs.
const (
	brokerClassAnnotation = "eventing.knative.dev/broker.class"
	brokerClassKnc        = "knc"
	channelAPIVersionKnc  = "messaging.knc.dev/v1alpha1"
	channelKindKnc        = "JetStreamChannel"
)

// liveKey names a live object of one of the four kinds.
type liveKey struct{ kind, namespace, name string }

// liveSet holds the live objects of the namespaces the runtime watches.
type liveSet map[liveKey]*unstructured.Unstructured

// desiredStatus is the status the runtime wants one live object to have.
type desiredStatus struct {
	kind string
	live *unstructured.Unstructured
	// status holds the conditions and fields; its ObservedGeneration is
	// ignored: the live metadata.generation is written.
	status status.Status
	// channel is status.channel of a Channel.
	channel *KReference
}

// planInput is what plan decides from.
type planInput struct {
	table *routing.Table
	// computed is status.Compute's result for table.
	computed []status.Report
	live     liveSet
	// own are the namespaces the runtime serves: there it also reports on
	// objects that are not in the table but that it would serve.
	own map[string]bool
}

// plan lays what the cluster knows over the status computed from the
// table: drift, missing Brokers and Channels, uids of Subscriptions. It
// returns the status of every live object the runtime reports on.
func plan(in planInput) []desiredStatus {
	p := planner{in: in, brokerReady: map[string]readiness{}, channelReady: map[string]readiness{}, inTable: map[liveKey]bool{},
		computedByKey: make(map[liveKey]*status.Report, len(in.computed))}
	for i := range in.computed {
		c := &in.computed[i]
		p.computedByKey[liveKey{c.Kind, c.Metadata.Namespace, c.Metadata.Name}] = c
	}
	var out []desiredStatus
	t := in.table
	if t == nil {
		t = &routing.Table{}
	}
	for i := range t.Brokers {
		b := &t.Brokers[i]
		p.inTable[liveKey{knative.KindBroker, b.Namespace, b.Name}] = true
		if d, ok := p.source(knative.KindBroker, b.Source, p.brokerReady); ok {
			out = append(out, d)
		}
		for j := range b.Triggers {
			tr := &b.Triggers[j]
			p.inTable[liveKey{knative.KindTrigger, tr.Namespace, tr.Name}] = true
			if d, ok := p.member(knative.KindTrigger, tr.Source, b.Source, p.brokerReady[b.Key()]); ok {
				out = append(out, d)
			}
		}
	}
	for i := range t.Channels {
		c := &t.Channels[i]
		p.inTable[liveKey{knative.KindChannel, c.Namespace, c.Name}] = true
		for j := range c.Subscriptions {
			s := &c.Subscriptions[j]
			p.inTable[liveKey{knative.KindSubscription, s.Namespace, s.Name}] = true
		}
		d, ok := p.source(knative.KindChannel, c.Source, p.channelReady)
		if ok {
			p.channelFields(&d, c)
			out = append(out, d)
		}
		for j := range c.Subscriptions {
			s := &c.Subscriptions[j]
			if d, ok := p.member(knative.KindSubscription, s.Source, c.Source, p.channelReady[c.Key()]); ok {
				out = append(out, d)
			}
		}
	}
	for i := range t.PingSources {
		ps := &t.PingSources[i]
		key := liveKey{knative.KindPingSource, ps.Namespace, ps.Name}
		p.inTable[key] = true
		live := p.in.live[key]
		if live == nil {
			continue
		}
		d := desiredStatus{kind: knative.KindPingSource, live: live}
		if c := p.computed(knative.KindPingSource, ps.Source); c != nil {
			d.status = copyStatus(c.Status)
		}
		out = append(out, d)
	}
	for i := range t.Sequences {
		if d, ok := p.flow(knative.KindSequence, t.Sequences[i].Source); ok {
			out = append(out, d)
		}
	}
	for i := range t.Parallels {
		if d, ok := p.flow(knative.KindParallel, t.Parallels[i].Source); ok {
			out = append(out, d)
		}
	}
	return append(out, p.orphans()...)
}

// flow plans a Sequence or Parallel of the table: the status computed
// from its Channels and Subscriptions, which it owns no routes beyond.
func (p *planner) flow(kind string, o routing.Source) (desiredStatus, bool) {
	p.inTable[liveKey{kind, o.Namespace, o.Name}] = true
	live := p.in.live[liveKey{kind, o.Namespace, o.Name}]
	if live == nil {
		return desiredStatus{}, false
	}
	d := desiredStatus{kind: kind, live: live}
	if c := p.computed(kind, o); c != nil {
		d.status = copyStatus(c.Status)
	}
	return d, true
}

// readiness is the final Ready of a Broker or Channel, as its Triggers or
// Subscriptions see it.
type readiness struct {
	missing bool
	ready   status.Condition
}

type planner struct {
	in                        planInput
	brokerReady, channelReady map[string]readiness
	inTable                   map[liveKey]bool
	computedByKey             map[liveKey]*status.Report
}

func (p *planner) computed(kind string, o routing.Source) *status.Report {
	return p.computedByKey[liveKey{kind, o.Namespace, o.Name}]
}

// drift returns why the live object's spec is not the compiled one, or ""
// when it is (or when the table has no hash to compare with).
func drift(kind string, live *unstructured.Unstructured, compiled routing.Source) string {
	if compiled.SpecHash == "" {
		return ""
	}
	spec, _, _ := unstructured.NestedMap(live.Object, "spec")
	hashes, err := specHashes(kind, spec)
	if err != nil {
		return fmt.Sprintf("the live spec (generation %d) is not one knc compiled (%v): run knc build and apply its output; the routes compiled from %s stay in force",
			live.GetGeneration(), err, compiled.SpecHash)
	}
	if slices.Contains(hashes, compiled.SpecHash) {
		return ""
	}
	return fmt.Sprintf("the live spec (generation %d, %s) differs from the compiled one (%s): run knc build and apply its output; the compiled routes stay in force",
		live.GetGeneration(), hashes[0], compiled.SpecHash)
}

func notCompiled(message string) status.Condition {
	return status.Condition{Type: status.ConditionReady, Status: status.False, Reason: ReasonNotCompiled, Message: message}
}

// source plans a Broker or Channel of the table, recording its final
// Ready for its Triggers or Subscriptions.
func (p *planner) source(kind string, o routing.Source, ready map[string]readiness) (desiredStatus, bool) {
	live := p.in.live[liveKey{kind, o.Namespace, o.Name}]
	if live == nil {
		ready[o.Key()] = readiness{missing: true}
		return desiredStatus{}, false
	}
	d := desiredStatus{kind: kind, live: live}
	if c := p.computed(kind, o); c != nil {
		d.status = copyStatus(c.Status)
	}
	conds := withoutReady(d.status.Conditions)
	summary := status.Summary(kind, conds)
	if msg := drift(kind, live, o); msg != "" {
		summary = notCompiled(msg)
	}
	d.status.Conditions = append([]status.Condition{summary}, conds...)
	ready[o.Key()] = readiness{ready: summary}
	return d, true
}

// member plans a Trigger or Subscription of the table, whose readiness
// depends on its Broker's or Channel's.
func (p *planner) member(kind string, o, parent routing.Source, parentReady readiness) (desiredStatus, bool) {
	live := p.in.live[liveKey{kind, o.Namespace, o.Name}]
	if live == nil {
		return desiredStatus{}, false
	}
	d := desiredStatus{kind: kind, live: live}
	if c := p.computed(kind, o); c != nil {
		d.status = copyStatus(c.Status)
	}
	conds := withoutReady(d.status.Conditions)
	conds = setCondition(conds, parentCondition(kind, parent, parentReady))
	summary := status.Summary(kind, conds)
	if msg := drift(kind, live, o); msg != "" {
		summary = notCompiled(msg)
	}
	d.status.Conditions = append([]status.Condition{summary}, conds...)
	return d, true
}

// parentCondition is BrokerReady of a Trigger, or ChannelReady of a
// Subscription, from the final Ready of the Broker or Channel.
func parentCondition(kind string, parent routing.Source, r readiness) status.Condition {
	condType, noun, missing := status.ConditionBrokerReady, "broker", ReasonBrokerDoesNotExist
	readyReason, notReady, provisioning := "BrokerReady", "BrokerNotReady", "BrokerProvisioning"
	if kind == knative.KindSubscription {
		condType, noun, missing = status.ConditionChannelReady, "channel", ReasonChannelDoesNotExist
		readyReason, notReady, provisioning = "ChannelReady", "ChannelNotReady", "ChannelProvisioning"
	}
	switch {
	case r.missing:
		return status.Condition{Type: condType, Status: status.False, Reason: missing,
			Message: fmt.Sprintf("%s %s does not exist", noun, parent.Key())}
	case r.ready.Status == status.True:
		return status.Condition{Type: condType, Status: status.True, Reason: readyReason,
			Message: fmt.Sprintf("%s %s is ready", noun, parent.Key())}
	case r.ready.Status == status.False:
		return status.Condition{Type: condType, Status: status.False, Reason: notReady,
			Message: fmt.Sprintf("%s %s: %s", noun, parent.Key(), r.ready.Message)}
	default:
		return status.Condition{Type: condType, Status: status.Unknown, Reason: provisioning,
			Message: fmt.Sprintf("%s %s: %s", noun, parent.Key(), r.ready.Message)}
	}
}

// channelFields sets what only the cluster knows of a Channel: the uid
// and generation of each live Subscription in status.subscribers, and
// status.channel.
func (p *planner) channelFields(d *desiredStatus, c *routing.Channel) {
	computed := d.status.Subscribers
	var subs []status.SubscriberStatus
	for i := range c.Subscriptions {
		s := &c.Subscriptions[i]
		live := p.in.live[liveKey{knative.KindSubscription, s.Namespace, s.Name}]
		if live == nil {
			continue
		}
		st := status.SubscriberStatus{UID: string(live.GetUID()), ObservedGeneration: live.GetGeneration(), Ready: status.Unknown}
		if i < len(computed) {
			st.Ready, st.Message = computed[i].Ready, computed[i].Message
		}
		if msg := drift(knative.KindSubscription, live, s.Source); msg != "" {
			st.Ready, st.Message = status.False, msg
		}
		subs = append(subs, st)
	}
	d.status.Subscribers = subs
	apiVersion, kind := channelTemplate(d.live)
	d.channel = &KReference{APIVersion: apiVersion, Kind: kind, Name: c.Name, Namespace: c.Namespace}
}

// channelTemplate returns the implementation of a live Channel.
func channelTemplate(live *unstructured.Unstructured) (apiVersion, kind string) {
	apiVersion, _, _ = unstructured.NestedString(live.Object, "spec", "channelTemplate", "apiVersion")
	kind, _, _ = unstructured.NestedString(live.Object, "spec", "channelTemplate", "kind")
	if apiVersion == "" && kind == "" {
		return channelAPIVersionKnc, channelKindKnc
	}
	return apiVersion, kind
}

// servedByKnc reports whether knc runs a live Broker or Channel.
func servedByKnc(kind string, live *unstructured.Unstructured) bool {
	switch kind {
	case knative.KindBroker:
		class := live.GetAnnotations()[brokerClassAnnotation]
		return class == "" || class == brokerClassKnc
	case knative.KindChannel:
		apiVersion, kind := channelTemplate(live)
		return apiVersion == channelAPIVersionKnc && kind == channelKindKnc ||
			apiVersion == knative.MessagingV1 && kind == knative.KindInMemoryChannel
	}
	return false
}

// orphans plans the live objects of the runtime's own namespaces that are
// not in the table but that it would serve: Brokers and Channels knc
// runs, and Triggers and Subscriptions of those, or of a Broker or Channel
// that does not exist. Objects of other implementations are left alone.
func (p *planner) orphans() []desiredStatus {
	var keys []liveKey
	for k := range p.in.live {
		if p.in.own[k.namespace] && !p.inTable[k] {
			keys = append(keys, k)
		}
	}
	slices.SortFunc(keys, func(a, b liveKey) int {
		return strings.Compare(a.kind+"/"+a.namespace+"/"+a.name, b.kind+"/"+b.namespace+"/"+b.name)
	})
	const notInTable = "this %s is not in the routing table the runtime serves: run knc build and apply its output"
	var out []desiredStatus
	for _, k := range keys {
		live := p.in.live[k]
		d := desiredStatus{kind: k.kind, live: live}
		switch k.kind {
		case knative.KindPingSource:
			// Not compiled, so not fired by knc: whoever runs it
			// reports it.
			continue
		case knative.KindBroker, knative.KindChannel:
			if !servedByKnc(k.kind, live) {
				continue
			}
			d.status.Conditions = []status.Condition{notCompiled(fmt.Sprintf(notInTable, strings.ToLower(k.kind)))}
		case knative.KindTrigger, knative.KindSubscription:
			parentKind, parentNS, parentName, ok := parentOf(k.kind, live)
			if !ok || !p.in.own[parentNS] {
				continue
			}
			parentLive := p.in.live[liveKey{parentKind, parentNS, parentName}]
			parent := routing.Source{Namespace: parentNS, Name: parentName}
			switch {
			case parentLive == nil:
				cond := parentCondition(k.kind, parent, readiness{missing: true})
				ready := cond
				ready.Type = status.ConditionReady
				d.status.Conditions = []status.Condition{ready, cond}
			case servedByKnc(parentKind, parentLive):
				d.status.Conditions = []status.Condition{notCompiled(fmt.Sprintf(notInTable, strings.ToLower(k.kind)))}
			default:
				continue
			}
		default:
			// A flow missing from the table is of a channel class knc
			// does not run: that class's implementation reports it.
			continue
		}
		out = append(out, d)
	}
	return out
}

// parentOf returns the Broker of a live Trigger, or the Channel of a live
// Subscription when it is a messaging.knative.dev Channel.
func parentOf(kind string, live *unstructured.Unstructured) (parentKind, namespace, name string, ok bool) {
	switch kind {
	case knative.KindTrigger:
		name, _, _ = unstructured.NestedString(live.Object, "spec", "broker")
		return knative.KindBroker, live.GetNamespace(), name, name != ""
	case knative.KindSubscription:
		apiVersion, _, _ := unstructured.NestedString(live.Object, "spec", "channel", "apiVersion")
		k, _, _ := unstructured.NestedString(live.Object, "spec", "channel", "kind")
		name, _, _ = unstructured.NestedString(live.Object, "spec", "channel", "name")
		namespace, _, _ = unstructured.NestedString(live.Object, "spec", "channel", "namespace")
		if namespace == "" {
			namespace = live.GetNamespace()
		}
		return knative.KindChannel, namespace, name, apiVersion == MessagingV1.String() && k == knative.KindChannel && name != ""
	}
	return "", "", "", false
}

func withoutReady(conds []status.Condition) []status.Condition {
	var out []status.Condition
	for _, c := range conds {
		if c.Type != status.ConditionReady {
			out = append(out, c)
		}
	}
	return out
}

// setCondition replaces the condition of c's type, or appends c.
func setCondition(conds []status.Condition, c status.Condition) []status.Condition {
	for i := range conds {
		if conds[i].Type == c.Type {
			conds[i] = c
			return conds
		}
	}
	return append(conds, c)
}

func copyStatus(s status.Status) status.Status {
	out := s
	out.Conditions = append([]status.Condition(nil), s.Conditions...)
	out.Subscribers = append([]status.SubscriberStatus(nil), s.Subscribers...)
	out.CloudEventAttributes = append([]status.CloudEventAttributes(nil), s.CloudEventAttributes...)
	if s.Address != nil {
		a := *s.Address
		out.Address = &a
	}
	if s.PhysicalSubscription != nil {
		ps := *s.PhysicalSubscription
		out.PhysicalSubscription = &ps
	}
	out.ChannelStatuses = append([]status.ChannelStatus(nil), s.ChannelStatuses...)
	out.SubscriptionStatuses = append([]status.SubscriptionStatus(nil), s.SubscriptionStatuses...)
	out.BranchStatuses = append([]status.BranchStatus(nil), s.BranchStatuses...)
	if s.IngressChannelStatus != nil {
		c := *s.IngressChannelStatus
		out.IngressChannelStatus = &c
	}
	return out
}
