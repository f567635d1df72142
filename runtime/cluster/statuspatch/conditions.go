package statuspatch

import (
	"reflect"
	"slices"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Getter is an object with conditions.
type Getter interface {
	GetConditions() []metav1.Condition
}

// Setter is an object whose conditions can be set.
type Setter interface {
	Getter
	GetGeneration() int64
	SetConditions([]metav1.Condition)
}

// maxMessageLength is the longest message Set keeps; a longer one is cut
// and ends in "...".
const maxMessageLength = 32768

// firstConditions are the condition types sorted before all others, in
// this order, as kstatus readers (and kubectl users) expect.
var firstConditions = map[string]int{"Stalled": 0, "Reconciling": 1, "Ready": 2}

// Get returns the condition of type t, or nil.
func Get(from Getter, t string) *metav1.Condition {
	for _, c := range from.GetConditions() {
		if c.Type == t {
			return &c
		}
	}
	return nil
}

// Has reports whether from has a condition of type t.
func Has(from Getter, t string) bool { return Get(from, t) != nil }

// Set sets c on to. c is stamped with to's generation; its
// lastTransitionTime is the existing condition's when the status, reason
// and message are unchanged, now when they changed, and its own (or now,
// when it has none) when to had no condition of its type.
func Set(to Setter, c *metav1.Condition) {
	if to == nil || c == nil {
		return
	}
	c.ObservedGeneration = to.GetGeneration()
	c.Message = trimMessage(c.Message)
	conds := to.GetConditions()
	i := slices.IndexFunc(conds, func(e metav1.Condition) bool { return e.Type == c.Type })
	switch {
	case i < 0:
		if c.LastTransitionTime.IsZero() {
			c.LastTransitionTime = now()
		}
		conds = append(conds, *c)
	case !sameState(&conds[i], c):
		c.LastTransitionTime = now()
		conds[i] = *c
	default:
		c.LastTransitionTime = conds[i].LastTransitionTime
		if conds[i].ObservedGeneration != c.ObservedGeneration {
			conds[i] = *c
		}
	}
	slices.SortFunc(conds, compareConditions)
	to.SetConditions(conds)
}

// Delete removes the condition of type t from to.
func Delete(to Setter, t string) {
	if to == nil {
		return
	}
	conds := to.GetConditions()
	kept := make([]metav1.Condition, 0, len(conds))
	for _, c := range conds {
		if c.Type != t {
			kept = append(kept, c)
		}
	}
	to.SetConditions(kept)
}

// now is the time of a transition, to the second as the API server
// keeps it.
func now() metav1.Time { return metav1.NewTime(time.Now().UTC().Truncate(time.Second)) }

func trimMessage(m string) string {
	const tail = "..."
	if len(m) <= maxMessageLength {
		return m
	}
	return m[:maxMessageLength-len(tail)] + tail
}

// sameState reports whether two conditions agree on everything but their
// lastTransitionTime and observedGeneration.
func sameState(a, b *metav1.Condition) bool {
	return a.Type == b.Type && a.Status == b.Status && a.Reason == b.Reason && a.Message == b.Message
}

// compareConditions orders Stalled, Reconciling and Ready first, then
// the newest observedGeneration, then by type.
func compareConditions(a, b metav1.Condition) int {
	wa, firstA := firstConditions[a.Type]
	wb, firstB := firstConditions[b.Type]
	switch {
	case firstA && firstB:
		return wa - wb
	case firstA:
		return -1
	case firstB:
		return 1
	case a.ObservedGeneration != b.ObservedGeneration:
		if a.ObservedGeneration > b.ObservedGeneration {
			return -1
		}
		return 1
	case a.Type < b.Type:
		return -1
	case a.Type > b.Type:
		return 1
	}
	return 0
}

// change is one step from the conditions of before to those of after: an
// addition (before nil), a removal (after nil), or a change.
type change struct {
	before, after *metav1.Condition
}

// diff lists the changes that turn before's conditions into after's.
func diff(before, after Getter) []change {
	var out []change
	for _, a := range after.GetConditions() {
		b := Get(before, a.Type)
		if b == nil || !reflect.DeepEqual(&a, b) {
			out = append(out, change{before: b, after: &a})
		}
	}
	for _, b := range before.GetConditions() {
		if !Has(after, b.Type) {
			out = append(out, change{before: &b})
		}
	}
	return out
}

// conflictError is a change of another writer's condition that the
// latest object contradicts.
type conflictError struct {
	conditionType, what string
}

func (e *conflictError) Error() string {
	return "condition " + e.conditionType + " " + e.what + " by another writer since it was read; not overwriting it"
}

// apply makes the changes on latest, a newer copy of the object they were
// computed from. An owned condition takes the changed value whatever
// latest holds; another condition does when latest still holds what the
// change started from, or already what it leads to, and is an error
// otherwise.
func apply(changes []change, latest Setter, owned []string) error {
	for _, c := range changes {
		var t string
		if c.after != nil {
			t = c.after.Type
		} else {
			t = c.before.Type
		}
		mine := slices.Contains(owned, t)
		cur := Get(latest, t)
		switch {
		case c.after == nil: // removed
			if !mine && cur != nil && !sameState(cur, c.before) {
				return &conflictError{t, "was changed"}
			}
			Delete(latest, t)
		case mine:
			Set(latest, c.after)
		case c.before == nil: // added
			if cur == nil {
				Set(latest, c.after)
			} else if !sameState(cur, c.after) {
				return &conflictError{t, "was added differently"}
			}
		default: // changed
			switch {
			case cur == nil:
				return &conflictError{t, "was removed"}
			case !reflect.DeepEqual(cur, c.before):
				if !sameState(cur, c.after) {
					return &conflictError{t, "was changed"}
				}
			default:
				Set(latest, c.after)
			}
		}
	}
	return nil
}
