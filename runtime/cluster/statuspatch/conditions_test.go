package statuspatch_test

import (
	"strings"
	"testing"
	"time"

	fluxconditions "github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knc-dev/knc/runtime/cluster"
	"github.com/knc-dev/knc/runtime/cluster/statuspatch"
)

// old is a lastTransitionTime long past: a condition that keeps it kept
// its time, one with a time of the test's run was given a new one.
const old = "2020-01-02T03:04:05Z"

// fresh stands in, when results are compared, for a lastTransitionTime
// stamped while the test ran.
const fresh = "<stamped while the test ran>"

// normalized returns conds with every lastTransitionTime within
// [start-1s, now+1s] replaced by fresh, so that two runs a second apart
// compare equal while a kept time does not pass for a new one.
func normalized(conds []cluster.LiveCondition, start time.Time) []cluster.LiveCondition {
	out := make([]cluster.LiveCondition, len(conds))
	for i, c := range conds {
		if ts, err := time.Parse(time.RFC3339, c.LastTransitionTime); err == nil &&
			!ts.Before(start.Add(-time.Second).Truncate(time.Second)) && !ts.After(time.Now().Add(time.Second)) {
			c.LastTransitionTime = fresh
		}
		out[i] = c
	}
	return out
}

// op is one change a writer makes to an object's conditions: Set when
// set is not nil, else Delete of del.
type op struct {
	set *metav1.Condition
	del string
}

func set(t, status, reason, message string) op {
	return op{set: &metav1.Condition{Type: t, Status: metav1.ConditionStatus(status), Reason: reason, Message: message}}
}

func del(t string) op { return op{del: t} }

func object(generation, observed int64, conds ...cluster.LiveCondition) *cluster.LiveObject {
	o := &cluster.LiveObject{}
	o.Generation = generation
	o.Status.ObservedGeneration = observed
	o.Status.Conditions = conds
	return o
}

func cond(t, status, reason, message string) cluster.LiveCondition {
	return cluster.LiveCondition{Type: t, Status: status, Reason: reason, Message: message, LastTransitionTime: old}
}

func runFlux(o *cluster.LiveObject, ops []op) {
	for _, op := range ops {
		if op.set != nil {
			c := *op.set
			fluxconditions.Set(o, &c)
		} else {
			fluxconditions.Delete(o, op.del)
		}
	}
}

func runOurs(o *cluster.LiveObject, ops []op) {
	for _, op := range ops {
		if op.set != nil {
			c := *op.set
			statuspatch.Set(o, &c)
		} else {
			statuspatch.Delete(o, op.del)
		}
	}
}

// TestSetAsFlux runs sequences of condition changes through Flux's
// conditions.Set and Delete and through this package's, on Knative
// conditions as the runtime holds them, and compares the results.
func TestSetAsFlux(t *testing.T) {
	long := strings.Repeat("x", 40000)
	withTime := set("Addressable", "True", "Ready", "")
	withTime.set.LastTransitionTime = metav1.NewTime(time.Date(2021, 5, 6, 7, 8, 9, 0, time.UTC))
	for _, tc := range []struct {
		name string
		obj  *cluster.LiveObject
		ops  []op
	}{
		{"a condition added to none", object(1, 0), []op{set("Ready", "True", "Ready", "")}},
		{"a condition added with its own time", object(1, 1, cond("Ready", "True", "R", "")), []op{withTime}},
		{"the same state keeps the time", object(1, 1, cond("Ready", "True", "R", "m")), []op{set("Ready", "True", "R", "m")}},
		{"a new status is a transition", object(1, 1, cond("Ready", "True", "R", "m")), []op{set("Ready", "False", "R", "m")}},
		{"a new reason is a transition", object(1, 1, cond("Ready", "True", "R", "m")), []op{set("Ready", "True", "S", "m")}},
		{"a new message is a transition", object(1, 1, cond("Ready", "True", "R", "m")), []op{set("Ready", "True", "R", "n")}},
		{"a new generation keeps the time", object(4, 2, cond("Ready", "True", "R", "m"), cond("Addressable", "True", "R", "")),
			[]op{set("Ready", "True", "R", "m")}},
		{"a new generation orders the set conditions first", object(4, 2, cond("A", "True", "R", ""), cond("B", "True", "R", ""), cond("C", "True", "R", "")),
			[]op{set("C", "True", "R", ""), set("B", "False", "R", "")}},
		{"Stalled, Reconciling and Ready go first", object(1, 1, cond("Addressable", "True", "R", "")),
			[]op{set("Ready", "True", "R", ""), set("Reconciling", "True", "R", ""), set("Stalled", "False", "R", ""), set("Abc", "True", "R", "")}},
		{"a long message is cut", object(1, 1), []op{set("Ready", "False", "R", long)}},
		{"a severity stays with its type", object(1, 1, cluster.LiveCondition{Type: "Scaled", Status: "True", Severity: "Info", LastTransitionTime: old}),
			[]op{set("Scaled", "False", "Down", "")}},
		{"a delete removes one type", object(1, 1, cond("Ready", "True", "R", ""), cond("Other", "True", "R", "")), []op{del("Other")}},
		{"a delete of a missing type", object(1, 1, cond("Ready", "True", "R", "")), []op{del("Other")}},
		{"a malformed time is replaced on a transition", object(1, 1, cluster.LiveCondition{Type: "Ready", Status: "True", LastTransitionTime: "yesterday"}),
			[]op{set("Ready", "False", "R", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			flux := tc.obj.DeepCopyObject().(*cluster.LiveObject)
			ours := tc.obj.DeepCopyObject().(*cluster.LiveObject)
			runFlux(flux, tc.ops)
			runOurs(ours, tc.ops)
			want, got := normalized(flux.Status.Conditions, start), normalized(ours.Status.Conditions, start)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("conditions (-flux +statuspatch):\n%s", diff)
			}
		})
	}
}

// TestMergeConditionsAsFlux runs the three-way merge of a writer's change
// onto a newer object, the step Patch takes after reading the latest
// object, through Flux's conditions.NewPatch and Apply and through this
// package's, and compares the merged conditions and whether each found a
// conflict.
func TestMergeConditionsAsFlux(t *testing.T) {
	owned := []string{"Ready", "Addressable"}
	for _, tc := range []struct {
		name string
		// before is the object as the writer read it, changed by ops;
		// latest is the object on the API server.
		before, latest *cluster.LiveObject
		ops            []op
	}{
		{"an owned change wins over another writer's",
			object(1, 1, cond("Ready", "False", "R", "")), object(1, 1, cond("Ready", "Unknown", "Other", "")),
			[]op{set("Ready", "True", "R", "")}},
		{"an owned removal wins over another writer's change",
			object(1, 1, cond("Ready", "True", "R", ""), cond("Addressable", "True", "R", "")), object(1, 1, cond("Ready", "True", "R", ""), cond("Addressable", "False", "X", "")),
			[]op{del("Addressable")}},
		{"another writer's condition nobody changed is kept",
			object(1, 1, cond("Ready", "True", "R", "")), object(1, 1, cond("Ready", "True", "R", ""), cond("Foreign", "True", "F", "")),
			[]op{set("Ready", "False", "R", "")}},
		{"an added foreign type another writer added alike",
			object(1, 1), object(1, 1, cond("Foreign", "True", "F", "")),
			[]op{set("Foreign", "True", "F", "")}},
		{"an added foreign type another writer added differently",
			object(1, 1), object(1, 1, cond("Foreign", "False", "F", "")),
			[]op{set("Foreign", "True", "F", "")}},
		{"a changed foreign type another writer removed",
			object(1, 1, cond("Foreign", "True", "F", "")), object(1, 1),
			[]op{set("Foreign", "False", "F", "")}},
		{"a changed foreign type another writer changed differently",
			object(1, 1, cond("Foreign", "True", "F", "")), object(1, 1, cond("Foreign", "Unknown", "G", "")),
			[]op{set("Foreign", "False", "F", "")}},
		{"a changed foreign type another writer changed alike",
			object(1, 1, cond("Foreign", "True", "F", "")), object(1, 1, cond("Foreign", "False", "F", "")),
			[]op{set("Foreign", "False", "F", "")}},
		{"a removed foreign type another writer changed",
			object(1, 1, cond("Foreign", "True", "F", "")), object(1, 1, cond("Foreign", "False", "G", "")),
			[]op{del("Foreign")}},
		{"a removed foreign type nobody changed",
			object(1, 1, cond("Foreign", "True", "F", "")), object(1, 1, cond("Foreign", "True", "F", "")),
			[]op{del("Foreign")}},
		{"a new generation with a foreign condition changed meanwhile",
			object(2, 1, cond("Ready", "True", "R", ""), cond("Foreign", "True", "F", "")), object(2, 1, cond("Ready", "True", "R", ""), cond("Foreign", "False", "G", "")),
			[]op{set("Ready", "True", "R", "")}},
		{"a new generation with nothing changed meanwhile",
			object(2, 1, cond("Ready", "True", "R", ""), cond("Foreign", "True", "F", "")), object(2, 1, cond("Ready", "True", "R", ""), cond("Foreign", "True", "F", "")),
			[]op{set("Ready", "False", "R", "")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := time.Now()
			fluxAfter := tc.before.DeepCopyObject().(*cluster.LiveObject)
			runFlux(fluxAfter, tc.ops)
			fluxAfter.Status.ObservedGeneration = fluxAfter.Generation // as both patchers do first
			fluxLatest := tc.latest.DeepCopyObject().(*cluster.LiveObject)
			fluxErr := fluxconditions.NewPatch(tc.before, fluxAfter).Apply(fluxLatest, fluxconditions.WithOwnedConditions(owned...))

			ourAfter := tc.before.DeepCopyObject().(*cluster.LiveObject)
			runOurs(ourAfter, tc.ops)
			ourAfter.Status.ObservedGeneration = ourAfter.Generation
			ourLatest := tc.latest.DeepCopyObject().(*cluster.LiveObject)
			ourErr := statuspatch.MergeConditions(tc.before, ourAfter, ourLatest, owned)

			if (fluxErr != nil) != (ourErr != nil) {
				t.Fatalf("Flux's merge: %v; statuspatch's: %v", fluxErr, ourErr)
			}
			want, got := normalized(fluxLatest.Status.Conditions, start), normalized(ourLatest.Status.Conditions, start)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("merged conditions (-flux +statuspatch):\n%s", diff)
			}
		})
	}
}
