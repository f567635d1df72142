package diff

import (
	"encoding/json"
	"reflect"
	"strings"

	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/model"
)

// compareFilters reports each Trigger, present at both revisions, whose
// filter changed, and whether it now passes fewer or more events.
func compareFilters(base, head *model.Set) []FilterChange {
	baseTriggers := map[model.Key]*model.Trigger{}
	for _, t := range base.Triggers {
		baseTriggers[model.KeyOf(t)] = t
	}
	var out []FilterChange
	for _, h := range head.Triggers {
		b, ok := baseTriggers[model.KeyOf(h)]
		if !ok {
			continue
		}
		if reflect.DeepEqual(b.Spec.Filter, h.Spec.Filter) && reflect.DeepEqual(b.Spec.Filters, h.Spec.Filters) {
			continue
		}
		oldExpr, newExpr := graph.TriggerFilter(b), graph.TriggerFilter(h)
		if oldExpr == newExpr {
			continue
		}
		fc := FilterChange{Namespace: h.Metadata.Namespace, Trigger: h.Metadata.Name, Old: oldExpr, New: newExpr, Effect: filterEffect(conjuncts(b), conjuncts(h))}
		if e := head.Index[model.KeyOf(h)]; e != nil {
			path := "spec.filter"
			if len(h.Spec.Filters) > 0 || len(b.Spec.Filters) > 0 {
				path = "spec.filters"
			}
			fc.Pos = e.Doc.PosOf(path)
		}
		out = append(out, fc)
	}
	return out
}

// condition is one of the conditions an event must meet to pass a
// filter, all of which must hold.
type condition struct {
	// op is exact, prefix, suffix or exists on attr; or opaque for a
	// condition compared only for equality (any, not, cesql).
	op, attr, value string
}

// conjuncts splits a Trigger's filter into conditions that must all hold:
// each key of an exact, prefix or suffix map, and the parts of all, at any
// depth. Everything else is one opaque condition.
func conjuncts(t *model.Trigger) []condition {
	var out []condition
	if len(t.Spec.Filters) > 0 {
		for _, f := range t.Spec.Filters {
			out = append(out, filterConjuncts(f)...)
		}
		return out
	}
	if t.Spec.Filter == nil {
		return nil
	}
	for k, v := range t.Spec.Filter.Attributes {
		if v == "" {
			out = append(out, condition{op: "exists", attr: k})
		} else {
			out = append(out, condition{op: "exact", attr: k, value: v})
		}
	}
	return out
}

func filterConjuncts(f model.SubscriptionsAPIFilter) []condition {
	var out []condition
	for k, v := range f.Exact {
		out = append(out, condition{op: "exact", attr: k, value: v})
	}
	for k, v := range f.Prefix {
		out = append(out, condition{op: "prefix", attr: k, value: v})
	}
	for k, v := range f.Suffix {
		out = append(out, condition{op: "suffix", attr: k, value: v})
	}
	for _, a := range f.All {
		out = append(out, filterConjuncts(a)...)
	}
	rest := model.SubscriptionsAPIFilter{Any: f.Any, Not: f.Not, CESQL: f.CESQL}
	if len(rest.Any) > 0 || rest.Not != nil || rest.CESQL != nil {
		b, _ := json.Marshal(rest)
		out = append(out, condition{op: "opaque", value: string(b)})
	}
	return out
}

// implies reports whether every event meeting a also meets b.
func implies(a, b condition) bool {
	if a == b {
		return true
	}
	if a.op == "opaque" || b.op == "opaque" || a.attr != b.attr {
		return false
	}
	switch b.op {
	case "exists":
		// Every condition on an attribute needs it to be there.
		return true
	case "prefix":
		return (a.op == "exact" || a.op == "prefix") && strings.HasPrefix(a.value, b.value)
	case "suffix":
		return (a.op == "exact" || a.op == "suffix") && strings.HasSuffix(a.value, b.value)
	}
	return false
}

// covers reports whether the conditions in strong imply every one in weak:
// an event passing strong then passes weak.
func covers(strong, weak []condition) bool {
	for _, w := range weak {
		found := false
		for _, s := range strong {
			if implies(s, w) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// filterEffect decides, where that is simple, whether the new filter
// passes fewer or more events than the old one.
func filterEffect(old, new []condition) string {
	narrower := covers(new, old)
	wider := covers(old, new)
	switch {
	case narrower && wider:
		return Equivalent
	case narrower:
		return MatchesLess
	case wider:
		return MatchesMore
	}
	return FilterChanged
}
