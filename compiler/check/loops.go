package check

import (
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
)

// edge is a Trigger or Subscription that forwards every event of one
// Broker or Channel to another.
type edge struct {
	from, to model.Key
	via      *model.Entry
	path     string
}

// loops reports Triggers and Subscriptions on a cycle of unfiltered
// forwarding: every event on it travels round until its TTL runs out.
// Filtered Triggers are left out; whether their filters pass forwarded
// events cannot be known before the events exist.
func loops(set *model.Set) diag.List {
	var edges []edge
	addressable := func(r *model.KReference) (model.Key, bool) {
		if r == nil {
			return model.Key{}, false
		}
		k := model.Key{Group: model.Group(r.APIVersion), Kind: r.Kind, Namespace: r.Namespace, Name: r.Name}
		e, ok := set.Index[k]
		if !ok || e.Object == nil {
			return model.Key{}, false
		}
		switch e.Object.(type) {
		case *model.Broker, *model.Channel:
			return k, true
		}
		return model.Key{}, false
	}
	for _, entry := range set.Entries {
		switch o := entry.Object.(type) {
		case *model.Trigger:
			if !matchesEverything(o) {
				continue
			}
			if to, ok := addressable(o.Spec.Subscriber.Ref); ok {
				from := o.BrokerKey()
				edges = append(edges, edge{from: from, to: to, via: entry, path: "spec.subscriber.ref"})
			}
		case *model.Subscription:
			if o.Spec.Subscriber == nil {
				continue
			}
			if to, ok := addressable(o.Spec.Subscriber.Ref); ok {
				from := o.ChannelKey()
				edges = append(edges, edge{from: from, to: to, via: entry, path: "spec.subscriber.ref"})
			}
		}
	}
	out := map[model.Key][]edge{}
	for _, e := range edges {
		out[e.from] = append(out[e.from], e)
	}
	var diags diag.List
	for _, e := range edges {
		if cycle := findPath(out, e.to, e.from); cycle != nil {
			names := []string{e.from.Kind + " " + e.from.Name, e.via.Key.Kind + " " + e.via.Key.Name}
			for _, c := range cycle {
				names = append(names, c.from.Kind+" "+c.from.Name, c.via.Key.Kind+" "+c.via.Key.Name)
			}
			names = append(names, e.from.Kind+" "+e.from.Name)
			diags.Add(e.via.Doc.PosOf(e.path), e.path, "events loop without end: %s; every event goes round until its TTL runs out: add a filter, or send to another destination", strings.Join(names, " → "))
		}
	}
	return diags
}

// findPath returns the edges of a path from a to b, or nil.
func findPath(out map[model.Key][]edge, a, b model.Key) []edge {
	if a == b {
		return []edge{}
	}
	seen := map[model.Key]bool{a: true}
	var walk func(model.Key) []edge
	walk = func(n model.Key) []edge {
		for _, e := range out[n] {
			if e.to == b {
				return []edge{e}
			}
			if seen[e.to] {
				continue
			}
			seen[e.to] = true
			if p := walk(e.to); p != nil {
				return append([]edge{e}, p...)
			}
		}
		return nil
	}
	return walk(a)
}

func matchesEverything(t *model.Trigger) bool {
	if len(t.Spec.Filters) > 0 {
		return false
	}
	return t.Spec.Filter == nil || len(t.Spec.Filter.Attributes) == 0
}
