package cluster

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/google/go-cmp/cmp"
)

// TestConditionMapping checks how Knative conditions are seen through
// Flux's metav1.Condition helpers: the status's observedGeneration stands
// for every condition's, and a severity survives a change of status.
func TestConditionMapping(t *testing.T) {
	b := &LiveObject{}
	b.Generation = 3
	b.Status.ObservedGeneration = 2
	b.Status.Conditions = []LiveCondition{
		{Type: "Ready", Status: "True", Reason: "Ready", Message: "broker is ready", LastTransitionTime: "2026-01-02T03:04:05Z"},
		{Type: "Scaled", Status: "True", Severity: "Info", Reason: "Up"},
	}
	got := b.GetConditions()
	if got[0].ObservedGeneration != 2 || got[0].LastTransitionTime.UTC() != time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) {
		t.Errorf("GetConditions()[0] = %+v", got[0])
	}
	conditions.MarkFalse(b, "Scaled", "Down", "scaled to zero")
	conditions.MarkTrue(b, "Ready", "Ready", "broker is ready")
	want := []LiveCondition{
		{Type: "Ready", Status: "True", Reason: "Ready", Message: "broker is ready", LastTransitionTime: "2026-01-02T03:04:05Z"},
		{Type: "Scaled", Status: "False", Severity: "Info", Reason: "Down", Message: "scaled to zero", LastTransitionTime: b.Status.Conditions[1].LastTransitionTime},
	}
	if diff := cmp.Diff(want, b.Status.Conditions); diff != "" {
		t.Errorf("conditions (-want +got):\n%s", diff)
	}
	if b.Status.Conditions[1].LastTransitionTime == "" {
		t.Error("a condition that changed status has no lastTransitionTime")
	}
}
