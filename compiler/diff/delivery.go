package diff

import (
	"slices"
	"strconv"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/redact"
)

// deliveryFields are the options of a DeliverySpec, in the order reports
// list them.
var deliveryFields = []string{"retry", "backoffPolicy", "backoffDelay", "timeout", "retryAfterMax", "deadLetterSink", "format"}

// deliveryOption is one option as shown, and as compared: durations are
// compared by length, so PT0.5S and PT0.50S are the same.
type deliveryOption struct {
	shown, compared string
}

func deliveryOptions(d *model.DeliverySpec) map[string]deliveryOption {
	out := map[string]deliveryOption{}
	if d == nil {
		return out
	}
	set := func(field, v string) {
		if v != "" {
			out[field] = deliveryOption{v, v}
		}
	}
	duration := func(field, v string) {
		if v == "" {
			return
		}
		o := deliveryOption{v, v}
		if dur, err := routes.ParseDuration(v); err == nil {
			o.compared = dur.String()
		}
		out[field] = o
	}
	if d.Retry != nil {
		set("retry", strconv.FormatInt(*d.Retry, 10))
	}
	set("backoffPolicy", model.Str(d.BackoffPolicy))
	duration("backoffDelay", model.Str(d.BackoffDelay))
	duration("timeout", model.Str(d.Timeout))
	duration("retryAfterMax", model.Str(d.RetryAfterMax))
	if d.DeadLetterSink != nil {
		set("deadLetterSink", describeDestination(d.DeadLetterSink))
	}
	set("format", model.Str(d.Format))
	return out
}

// describeDestination names a destination as the manifest gives it, with
// the password and query values of its URI masked.
func describeDestination(d *model.Destination) string {
	if d.Ref == nil {
		return redact.URI(model.Str(d.URI))
	}
	key := model.Key{Group: model.Group(d.Ref.APIVersion), Kind: d.Ref.Kind, Namespace: d.Ref.Namespace, Name: d.Ref.Name}
	s := kindLabel(key) + " " + key.Namespace + "/" + key.Name
	if d.URI != nil && *d.URI != "" {
		s += " " + redact.URI(*d.URI)
	}
	return s
}

// setsDelivery reports whether d sets any option: a Trigger or Subscription
// that does uses its own options and none of its Broker's or Channel's.
func setsDelivery(d *model.DeliverySpec) bool {
	return d != nil && *d != (model.DeliverySpec{})
}

// deliverer is a Broker, Trigger, Channel or Subscription with delivery
// options.
type deliverer struct {
	key      model.Key
	own      *model.DeliverySpec
	parent   model.Key // the Broker or Channel, for a Trigger or Subscription
	children []string  // the Triggers or Subscriptions inheriting, for a parent
}

func deliverers(set *model.Set) map[model.Key]*deliverer {
	m := map[model.Key]*deliverer{}
	for _, b := range set.Brokers {
		m[model.KeyOf(b)] = &deliverer{key: model.KeyOf(b), own: b.Spec.Delivery}
	}
	for _, c := range set.Channels {
		m[model.KeyOf(c)] = &deliverer{key: model.KeyOf(c), own: c.Spec.Delivery}
	}
	child := func(key, parent model.Key, own *model.DeliverySpec) {
		m[key] = &deliverer{key: key, own: own, parent: parent}
		if p := m[parent]; p != nil && !setsDelivery(own) {
			p.children = append(p.children, key.Name)
		}
	}
	for _, t := range set.Triggers {
		child(model.KeyOf(t), t.BrokerKey(), t.Spec.Delivery)
	}
	for _, s := range set.Subscriptions {
		child(model.KeyOf(s), s.ChannelKey(), s.Spec.Delivery)
	}
	for _, d := range m {
		slices.Sort(d.children)
	}
	return m
}

// effective returns the options that apply: a child's own when it sets
// any, else its parent's.
func (d *deliverer) effective(all map[model.Key]*deliverer) (opts map[string]deliveryOption, inherited bool) {
	if d.parent == (model.Key{}) || setsDelivery(d.own) {
		return deliveryOptions(d.own), false
	}
	if p := all[d.parent]; p != nil {
		return deliveryOptions(p.own), true
	}
	return deliveryOptions(nil), true
}

// compareDeliveries reports every delivery option that changed. A Broker's
// or Channel's change is reported once, with the Triggers or
// Subscriptions it reaches; theirs are reported only when they set options
// of their own at either revision.
func compareDeliveries(base, head *model.Set) []DeliveryChange {
	baseAll, headAll := deliverers(base), deliverers(head)
	var out []DeliveryChange
	keys := make([]model.Key, 0, len(headAll))
	for k := range headAll {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, compareKeys)
	for _, k := range keys {
		h := headAll[k]
		b, ok := baseAll[k]
		if !ok {
			continue
		}
		oldOpts, oldInherited := b.effective(baseAll)
		newOpts, newInherited := h.effective(headAll)
		if oldInherited && newInherited {
			continue
		}
		entry := head.Index[k]
		for _, field := range deliveryFields {
			o, n := oldOpts[field], newOpts[field]
			if o.compared == n.compared {
				continue
			}
			dc := DeliveryChange{Kind: kindLabel(k), Namespace: k.Namespace, Name: k.Name, Field: field, Old: o.shown, New: n.shown}
			if h.parent == (model.Key{}) {
				dc.AppliesTo = h.children
			}
			if entry != nil {
				dc.Pos = entry.Doc.PosOf("spec.delivery." + field)
			}
			out = append(out, dc)
		}
	}
	return out
}

func compareKeys(a, b model.Key) int {
	if c := kindRank(a.Kind) - kindRank(b.Kind); c != 0 {
		return c
	}
	for _, c := range [][2]string{{a.Kind, b.Kind}, {a.Namespace, b.Namespace}, {a.Name, b.Name}} {
		if c[0] != c[1] {
			if c[0] < c[1] {
				return -1
			}
			return 1
		}
	}
	return 0
}
