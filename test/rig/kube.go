package rig

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Poll calls f until it returns nil, and fails the test with f's last
// error when ctx ends or timeout has passed.
func Poll(t testing.TB, ctx context.Context, timeout time.Duration, f func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting: %v", err)
		case <-tick.C:
		}
	}
}

// Condition returns the status condition of type condType of u, or nil.
func Condition(u *unstructured.Unstructured, condType string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condType {
			return m
		}
	}
	return nil
}
