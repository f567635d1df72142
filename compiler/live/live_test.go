package live_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/compiler/crd"
	"github.com/knc-dev/knc/compiler/live"
	"github.com/knc-dev/knc/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

var (
	brokers  = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"}
	triggers = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"}
)

var crdsInstalled struct {
	once sync.Once
	err  error
}

// cluster is the shared API server with knc's CRDs installed, and a
// client of it as knc status makes one.
func cluster(t testing.TB) (*kubetest.Env, *live.Cluster) {
	t.Helper()
	env := kubetest.Current(t)
	crdsInstalled.once.Do(func() {
		crds, err := crd.CRDs()
		if err != nil {
			crdsInstalled.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		crdsInstalled.err = env.InstallCRDs(ctx, crds...)
	})
	if crdsInstalled.err != nil {
		t.Fatal(crdsInstalled.err)
	}
	c, err := live.NewCluster(env.Config(), live.ConnectOptions{Context: "kubetest"})
	if err != nil {
		t.Fatal(err)
	}
	return env, c
}

func broker(ns, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "eventing.knative.dev/v1", "kind": "Broker",
		"metadata": map[string]any{"name": name, "namespace": ns},
	}}
}

func trigger(ns, name, brokerName string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "eventing.knative.dev/v1", "kind": "Trigger",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     map[string]any{"broker": brokerName, "subscriber": map[string]any{"uri": "http://127.0.0.1:9/" + name}},
	}}
}

// setReady writes a Ready condition through the /status subresource, as
// the runtime does.
func setReady(t testing.TB, c *live.Cluster, gvr schema.GroupVersionResource, ns, name, status, reason string) {
	t.Helper()
	ri := c.Dynamic.Resource(gvr).Namespace(ns)
	u, err := ri.Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"type": "Ready", "status": status, "reason": reason, "lastTransitionTime": "2026-01-01T00:00:00Z"}}, "status", "conditions")
	if _, err := ri.UpdateStatus(t.Context(), u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func find(st *live.Status, kind, name string) *live.Object {
	for i := range st.Objects {
		o := &st.Objects[i]
		if o.Kind == kind && o.Name == name {
			return o
		}
		for j := range o.Children {
			if c := &o.Children[j]; c.Kind == kind && c.Name == name {
				return c
			}
		}
	}
	return nil
}

// TestWatchStatus follows a namespace: the first status, then a Trigger
// added under its Broker, then its Ready condition written; cancelling
// the context ends the watch without an error.
func TestWatchStatus(t *testing.T) {
	env, c := cluster(t)
	ns := env.Namespace(t)
	if _, err := c.Dynamic.Resource(brokers).Namespace(ns).Create(t.Context(), broker(ns, "default"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	setReady(t, c, brokers, ns, "default", "True", "Ready")

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	states := make(chan *live.Status, 100)
	done := make(chan error, 1)
	go func() {
		done <- live.WatchStatus(ctx, c, live.Scope{Namespaces: []string{ns}}, func(st *live.Status) error {
			states <- st
			return nil
		})
	}()
	// waitFor reads states until one satisfies ok.
	waitFor := func(what string, ok func(*live.Status) bool) {
		t.Helper()
		timeout := time.After(time.Minute)
		for {
			select {
			case st := <-states:
				if ok(st) {
					return
				}
			case err := <-done:
				t.Fatalf("the watch ended before %s: %v", what, err)
			case <-timeout:
				t.Fatalf("no status with %s after a minute", what)
			}
		}
	}
	waitFor("the Broker Ready", func(st *live.Status) bool {
		b := find(st, "Broker", "default")
		return b != nil && b.IsReady() && st.Ready
	})
	if _, err := c.Dynamic.Resource(triggers).Namespace(ns).Create(t.Context(), trigger(ns, "orders", "default"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	waitFor("the Trigger under its Broker, not ready", func(st *live.Status) bool {
		b := find(st, "Broker", "default")
		return b != nil && len(b.Children) == 1 && b.Children[0].Name == "orders" && !st.Ready && st.NotReady == 1
	})
	setReady(t, c, triggers, ns, "orders", "False", "Unresolved")
	waitFor("the Trigger's reason", func(st *live.Status) bool {
		o := find(st, "Trigger", "orders")
		return o != nil && o.Ready == "False" && o.Reason == "Unresolved"
	})
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WatchStatus ended with %v, want nil once its context is done", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("WatchStatus did not return after its context was cancelled")
	}
}

// BenchmarkReadStatus reads and writes out, as knc status -n does, the
// status of a Broker and 1,000 Triggers, with the client's throttling at
// live.DefaultQPS and DefaultBurst.
func BenchmarkReadStatus(b *testing.B) {
	env, c := cluster(b)
	ns := env.Namespace(b)
	if _, err := c.Dynamic.Resource(brokers).Namespace(ns).Create(b.Context(), broker(ns, "default"), metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	const n = 1000
	errs := make(chan error, n)
	sem := make(chan struct{}, 16)
	for i := range n {
		sem <- struct{}{}
		go func() {
			defer func() { <-sem }()
			_, err := c.Dynamic.Resource(triggers).Namespace(ns).Create(context.Background(), trigger(ns, fmt.Sprintf("t%04d", i), "default"), metav1.CreateOptions{})
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
	scope := live.Scope{Namespaces: []string{ns}}
	b.ResetTimer()
	for b.Loop() {
		st, err := live.ReadStatus(b.Context(), c, scope)
		if err != nil {
			b.Fatal(err)
		}
		if st.Total != n+1 {
			b.Fatalf("%d objects, want %d", st.Total, n+1)
		}
		if err := st.WriteText(io.Discard, time.Now()); err != nil {
			b.Fatal(err)
		}
	}
}
