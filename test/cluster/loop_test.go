package cluster

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/test/rig"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"
)

// sinkCRD is a test-only Addressable kind: it has status.address.url and
// nothing else, like any third-party Addressable.
var sinkCRD = kubetest.SchemalessCRD("test.knc.dev", "Sink", "sinks")

var sinks = schema.GroupVersionResource{Group: "test.knc.dev", Version: "v1", Resource: "sinks"}

// project writes a knc project for namespace ns whose subscribers are the
// loopback server at base, directly (uri) and through the Sink sink-a.
func project(t testing.TB, ns, base string, extra string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"knc.yaml": fmt.Sprintf(`apiVersion: config.knc.dev/v1alpha1
kind: Config
defaultNamespace: %s
external:
- {apiVersion: test.knc.dev/v1, kind: Sink, name: sink-a}
`, ns),
		"eventing.yaml": fmt.Sprintf(`apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: direct}
spec:
  broker: default
  filter: {attributes: {type: order}}
  subscriber: {uri: "%[1]s/direct"}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: duck}
spec:
  broker: default
  subscriber:
    ref: {apiVersion: test.knc.dev/v1, kind: Sink, name: sink-a}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: notes}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: note}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: notes}
  subscriber: {uri: "%[1]s/note"}
%[2]s`, base, extra),
	}
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// setSink creates or updates the Sink sink-a with address url.
func (c *cluster) setSink(t testing.TB, ns, url string) {
	t.Helper()
	r := c.Dynamic().Resource(sinks).Namespace(ns)
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "test.knc.dev/v1", "kind": "Sink",
		"metadata": map[string]any{"name": "sink-a", "namespace": ns},
	}}
	got, err := r.Create(t.Context(), obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(got.Object, url, "status", "address", "url")
	if _, err := r.UpdateStatus(t.Context(), got, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
}

func (c *cluster) get(t testing.TB, kind, ns, name string) *unstructured.Unstructured {
	t.Helper()
	got, err := c.Dynamic().Resource(knativeResources[kind]).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// waitCondition waits until an object's condition has status and reason,
// for its current generation.
func (c *cluster) waitCondition(t testing.TB, kind, ns, name, condType, status, reason string) *unstructured.Unstructured {
	t.Helper()
	var got *unstructured.Unstructured
	rig.Poll(t, t.Context(), time.Minute, func() error {
		var err error
		got, err = c.Dynamic().Resource(knativeResources[kind]).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		og, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration")
		cond := rig.Condition(got, condType)
		if og != got.GetGeneration() || cond == nil || cond["status"] != status || cond["reason"] != reason {
			return fmt.Errorf("%s %s: observedGeneration %d of %d, %s is %v; want %s %s", kind, name, og, got.GetGeneration(), condType, cond, status, reason)
		}
		return nil
	})
	return got
}

// TestGitOpsLoop follows a project through the loop: applied and served,
// events delivered through a duck-typed Addressable, the Addressable
// deleted and re-created, a Trigger of a missing Broker, a spec edited by
// hand, the fix committed and built, and the new table mounted.
func TestGitOpsLoop(t *testing.T) {
	c := newCluster(t)
	ctx := t.Context()
	if err := c.env.InstallCRDYAML(ctx, sinkCRD); err != nil {
		t.Fatal(err)
	}
	c.ResetDiscovery()
	// The Sink kind takes part in Addressable resolution as the
	// control-plane contract asks: a ClusterRole labelled for aggregation.
	_, err := c.env.Clientset().RbacV1().ClusterRoles().Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "sinks-addressable-resolver", Labels: map[string]string{"duck.knative.dev/addressable": "true"}},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{"test.knc.dev"}, Resources: []string{"sinks", "sinks/status"}, Verbs: []string{"get", "list", "watch"}}},
	}, metav1.CreateOptions{})
	if err != nil && !apierrors.IsAlreadyExists(err) { // -count=N shares one API server
		t.Fatal(err)
	}
	ns := c.env.Namespace(t)
	sink := rig.NewPathSink(t)
	c.setSink(t, ns, sink.URL+"/duck")

	_, objs := build(t, project(t, ns, sink.URL, ""))
	c.deploy(t, objs)
	table := rig.NewMountedTable(t.TempDir())
	mount(t, table, c.routesConfigMap(t, ns))
	rt := c.startRuntime(t, ns, table)
	c.waitReady(t, knative(objs))

	duck := c.get(t, "Trigger", ns, "duck")
	if got, _, _ := unstructured.NestedString(duck.Object, "status", "subscriberUri"); got != sink.URL+"/duck" {
		t.Errorf("duck subscriberUri = %q, want the Sink's address %s/duck", got, sink.URL)
	}
	note := c.get(t, "Subscription", ns, "note")
	wantSub := map[string]any{"uid": string(note.GetUID()), "observedGeneration": note.GetGeneration(), "ready": "True", "message": "the channel delivers to this subscription"}
	rig.Poll(t, ctx, time.Minute, func() error {
		subs, _, _ := unstructured.NestedSlice(c.get(t, "Channel", ns, "notes").Object, "status", "subscribers")
		if len(subs) != 1 || fmt.Sprint(subs[0]) != fmt.Sprint(wantSub) {
			return fmt.Errorf("Channel status.subscribers = %v, want [%v]", subs, wantSub)
		}
		return nil
	})
	broker := rt.URL + "/brokers/" + ns + "/default"
	if code := post(t, broker, "e1", "order"); code != 202 {
		t.Fatalf("POST to the Broker: %d", code)
	}
	sink.WaitFor(t, "/direct", "e1")
	sink.WaitFor(t, "/duck", "e1")
	if code := post(t, rt.URL+"/channels/"+ns+"/notes", "c1", "note"); code != 202 {
		t.Fatalf("POST to the Channel: %d", code)
	}
	sink.WaitFor(t, "/note", "c1")

	t.Run("deleted Addressable", func(t *testing.T) {
		if err := c.Dynamic().Resource(sinks).Namespace(ns).Delete(ctx, "sink-a", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		got := c.waitCondition(t, "Trigger", ns, "duck", "SubscriberResolved", "False", "Unresolved")
		if ready := rig.Condition(got, "Ready"); ready["status"] != "False" || !strings.Contains(fmt.Sprint(ready["message"]), "does not exist") {
			t.Errorf("Ready = %v, want False saying the Sink does not exist", ready)
		}
		// Flux's patch helper sends the conditions before the rest of
		// status, so a reader may see the new conditions beside the old
		// address for a moment; the address must still go.
		rig.Poll(t, ctx, time.Minute, func() error {
			got = c.get(t, "Trigger", ns, "duck")
			if uri, _, _ := unstructured.NestedString(got.Object, "status", "subscriberUri"); uri != "" {
				return fmt.Errorf("subscriberUri = %q, want it empty while unresolved", uri)
			}
			return nil
		})
		checkArgoCDHealth(t, got, "Degraded")
		if res, _ := kstatus.Compute(got); res.Status != kstatus.InProgressStatus {
			t.Errorf("kstatus %s, want InProgress", res.Status)
		}
		// The other Trigger still delivers; the duck one holds its events
		// until the Sink is back.
		if code := post(t, broker, "e2", "order"); code != 202 {
			t.Fatalf("POST: %d", code)
		}
		sink.WaitFor(t, "/direct", "e2")
		c.setSink(t, ns, sink.URL+"/duck")
		c.waitCondition(t, "Trigger", ns, "duck", "Ready", "True", "Ready")
		sink.WaitFor(t, "/duck", "e2")
	})

	t.Run("missing Broker", func(t *testing.T) {
		orphan := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "eventing.knative.dev/v1", "kind": "Trigger",
			"metadata": map[string]any{"name": "orphan", "namespace": ns},
			"spec":     map[string]any{"broker": "nope", "subscriber": map[string]any{"uri": sink.URL + "/orphan"}},
		}}
		if _, err := c.Dynamic().Resource(triggers).Namespace(ns).Create(ctx, orphan, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		got := c.waitCondition(t, "Trigger", ns, "orphan", "Ready", "False", "BrokerDoesNotExist")
		if cond := rig.Condition(got, "BrokerReady"); cond["status"] != "False" || !strings.Contains(fmt.Sprint(cond["message"]), ns+"/nope") {
			t.Errorf("BrokerReady = %v, want False naming the Broker %s/nope", cond, ns)
		}
		if err := c.Dynamic().Resource(triggers).Namespace(ns).Delete(ctx, "orphan", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("spec edited by hand", func(t *testing.T) {
		direct := c.get(t, "Trigger", ns, "direct")
		_ = unstructured.SetNestedField(direct.Object, "refund", "spec", "filter", "attributes", "type")
		if _, err := c.Dynamic().Resource(triggers).Namespace(ns).Update(ctx, direct, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		got := c.waitCondition(t, "Trigger", ns, "direct", "Ready", "False", "NotCompiled")
		if got.GetGeneration() != 2 {
			t.Errorf("generation %d, want 2", got.GetGeneration())
		}
		if msg := fmt.Sprint(rig.Condition(got, "Ready")["message"]); !strings.Contains(msg, "knc build") {
			t.Errorf("NotCompiled message %q does not say to run knc build", msg)
		}
		checkArgoCDHealth(t, got, "Degraded")
		// The runtime keeps serving the compiled route: type order.
		if code := post(t, broker, "e3", "order"); code != 202 {
			t.Fatalf("POST: %d", code)
		}
		sink.WaitFor(t, "/direct", "e3")
	})

	t.Run("fix built, applied and mounted", func(t *testing.T) {
		// The hand edit is committed, with a new Trigger.
		dir := project(t, ns, sink.URL, fmt.Sprintf(`---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: late}
spec:
  broker: default
  subscriber: {uri: "%s/late"}
`, sink.URL))
		eventing := filepath.Join(dir, "eventing.yaml")
		data, err := os.ReadFile(eventing)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(eventing, []byte(strings.Replace(string(data), "{type: order}", "{type: refund}", 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		_, objs2 := build(t, dir)
		c.deploy(t, objs2)
		// Applied but not yet mounted: the new Trigger is not served.
		c.waitCondition(t, "Trigger", ns, "late", "Ready", "False", "NotCompiled")
		mount(t, table, c.routesConfigMap(t, ns))
		c.waitReady(t, knative(objs2))
		if code := post(t, broker, "e4", "refund"); code != 202 {
			t.Fatalf("POST: %d", code)
		}
		sink.WaitFor(t, "/direct", "e4")
		sink.WaitFor(t, "/late", "e4")
		for _, name := range []string{"direct", "late"} {
			got := c.get(t, "Trigger", ns, name)
			checkArgoCDHealth(t, got, "Healthy")
			if res, _ := kstatus.Compute(got); res.Status != kstatus.CurrentStatus {
				t.Errorf("%s: kstatus %s (%s), want Current", name, res.Status, res.Message)
			}
		}
	})

	// Hundreds of status writes later, only the hand edit changed a
	// generation.
	for _, o := range knative(objs) {
		want := int64(1)
		if o.GetName() == "direct" {
			want = 2
		}
		if got := c.get(t, o.GetKind(), ns, o.GetName()).GetGeneration(); got != want {
			t.Errorf("%s %s: generation %d, want %d", o.GetKind(), o.GetName(), got, want)
		}
	}
}

// TestImmutableFields checks against the API server that the fields the
// control-plane contract makes immutable refuse an update, as kubectl edit
// would send it, and that other fields may change.
func TestImmutableFields(t *testing.T) {
	c := newCluster(t)
	ctx := t.Context()
	ns := c.env.Namespace(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "knc.yaml"), []byte("apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: "+ns+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	eventing := `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: other}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: t}
spec:
  broker: default
  subscriber: {uri: "http://127.0.0.1:9/"}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: c}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: s}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: c}
  subscriber: {uri: "http://127.0.0.1:9/"}
`
	if err := os.WriteFile(filepath.Join(dir, "eventing.yaml"), []byte(eventing), 0o644); err != nil {
		t.Fatal(err)
	}
	_, objs := build(t, dir)
	c.deploy(t, objs)

	edit := func(kind, name string, change func(u *unstructured.Unstructured)) error {
		u := c.get(t, kind, ns, name)
		change(u)
		_, err := c.Dynamic().Resource(knativeResources[kind]).Namespace(ns).Update(ctx, u, metav1.UpdateOptions{FieldManager: "kubectl-edit"})
		return err
	}
	tests := []struct {
		name, kind, object string
		change             func(u *unstructured.Unstructured)
		refused            bool
	}{
		{"Trigger spec.broker", "Trigger", "t", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "other", "spec", "broker")
		}, true},
		{"Trigger spec.subscriber", "Trigger", "t", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "http://127.0.0.1:10/", "spec", "subscriber", "uri")
		}, false},
		{"Subscription spec.channel", "Subscription", "s", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "d", "spec", "channel", "name")
		}, true},
		{"Channel spec.channelTemplate", "Channel", "c", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, "InMemoryChannel", "spec", "channelTemplate", "kind")
			_ = unstructured.SetNestedField(u.Object, "messaging.knative.dev/v1", "spec", "channelTemplate", "apiVersion")
		}, true},
		{"Broker spec.config", "Broker", "default", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedMap(u.Object, map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "cfg"}, "spec", "config")
		}, true},
		{"Broker spec.delivery", "Broker", "default", func(u *unstructured.Unstructured) {
			_ = unstructured.SetNestedField(u.Object, int64(2), "spec", "delivery", "retry")
		}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := edit(tt.kind, tt.object, tt.change)
			if tt.refused && err == nil {
				t.Fatal("the API server accepted the update")
			}
			if tt.refused && !strings.Contains(err.Error(), "immutable") {
				t.Errorf("refused for another reason: %v", err)
			}
			if !tt.refused && err != nil {
				t.Errorf("refused: %v", err)
			}
		})
	}
	t.Run("Broker class annotation", func(t *testing.T) {
		// The admission policy takes a moment to be loaded after it is
		// created.
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		rig.Poll(t, pctx, time.Minute, func() error {
			err := edit("Broker", "other", func(u *unstructured.Unstructured) {
				a := u.GetAnnotations()
				a["eventing.knative.dev/broker.class"] = "MTChannelBasedBroker"
				u.SetAnnotations(a)
			})
			if err == nil {
				// Put it back so that the next try is a change again.
				_ = edit("Broker", "other", func(u *unstructured.Unstructured) {
					a := u.GetAnnotations()
					a["eventing.knative.dev/broker.class"] = "knc"
					u.SetAnnotations(a)
				})
				return fmt.Errorf("the class change was accepted")
			}
			if !strings.Contains(err.Error(), "immutable") {
				return fmt.Errorf("refused for another reason: %w", err)
			}
			return nil
		})
	})
}
