package flux

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	kstatus "github.com/fluxcd/cli-utils/pkg/kstatus/status"
	"github.com/fluxcd/cli-utils/pkg/object"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/compiler/render/argocd/argocdtest"
	"github.com/knc-dev/knc/internal/gittest"
	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/test/rig"
)

var (
	brokers       = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"}
	triggers      = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"}
	channels      = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "channels"}
	subscriptions = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "subscriptions"}
)

// project is a knc project in namespace ns whose subscribers are paths of
// the loopback server base: the Trigger orders keeps events of type
// ordersType, all keeps every event, audit (when withAudit) keeps orders.
type project struct {
	ns, base   string
	ordersType string
	withAudit  bool
}

func (p project) files() map[string]string {
	eventing := fmt.Sprintf(`apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: orders}
spec:
  broker: default
  filter: {attributes: {type: %[2]s}}
  subscriber: {uri: "%[1]s/orders"}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: all}
spec:
  broker: default
  subscriber: {uri: "%[1]s/all"}
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
`, p.base, p.ordersType)
	if p.withAudit {
		eventing += fmt.Sprintf(`---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: audit}
spec:
  broker: default
  filter: {attributes: {type: order}}
  subscriber: {uri: "%s/audit"}
`, p.base)
	}
	return map[string]string{
		"knc.yaml":      "apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: " + p.ns + "\nruntime: {image: ghcr.io/knc-dev/knc:test}\n",
		"eventing.yaml": eventing,
	}
}

// platformRepo is the GitOps repository: deploy/ holds knc build's output,
// health/ an empty kustomization for the Kustomization that only checks
// health.
type platformRepo struct {
	*gittest.Repo
}

// commit builds p into deploy/ (replacing what was there), lets edit change
// the output as a hand edit would, and commits.
func (r platformRepo) commit(t testing.TB, p project, message string, edit func(deploy string)) {
	t.Helper()
	src := t.TempDir()
	for name, content := range p.files() {
		if err := os.WriteFile(filepath.Join(src, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	deploy := filepath.Join(r.Dir, "deploy")
	if err := os.RemoveAll(deploy); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(kncBinary, "build", src, "-o", deploy)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("knc build: %v\n%s", err, out)
	}
	if edit != nil {
		edit(deploy)
	}
	r.Write(map[string]string{"health/kustomization.yaml": "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n"})
	r.Commit(message)
}

// source stands in for source-controller: a clone of the served
// repository, fetched over HTTP at each reconcile.
type source struct {
	dir string
}

func newSource(t testing.TB, url string) *source {
	t.Helper()
	parent := t.TempDir()
	dir := filepath.Join(parent, "checkout")
	if _, err := gittest.Run(parent, "clone", "--quiet", url, dir); err != nil {
		t.Fatal(err)
	}
	return &source{dir: dir}
}

// fetch checks out the newest commit of main and returns its revision as
// Flux writes it.
func (s *source) fetch(t testing.TB) string {
	t.Helper()
	if _, err := gittest.Run(s.dir, "fetch", "--quiet", "origin", "main"); err != nil {
		t.Fatal(err)
	}
	if _, err := gittest.Run(s.dir, "checkout", "--quiet", "--detach", "FETCH_HEAD"); err != nil {
		t.Fatal(err)
	}
	rev, err := gittest.Run(s.dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	return "main@sha1:" + strings.TrimSpace(rev)
}

// logReady logs a Kustomization's Ready condition at a step of the loop.
func logReady(t testing.TB, step string, k *kustomization) {
	t.Helper()
	t.Logf("%s: Kustomization %s/%s Ready=%s reason=%s message=%q", step, fluxNamespace, k.name, k.ready.Status, k.ready.Reason, k.ready.Message)
}

func wantReady(t testing.TB, step string, k *kustomization, status metav1.ConditionStatus, reason string) {
	t.Helper()
	logReady(t, step, k)
	if k.ready.Status != status || k.ready.Reason != reason {
		t.Fatalf("%s: Kustomization %s Ready=%s %s, want %s %s", step, k.name, k.ready.Status, k.ready.Reason, status, reason)
	}
}

func knativeID(ns, group, kind, name string) object.ObjMetadata {
	return object.ObjMetadata{Namespace: ns, Name: name, GroupKind: schema.GroupKind{Group: group, Kind: kind}}
}

// argoHealth runs knc's Argo CD health check on a live object.
func argoHealth(t testing.TB, live *unstructured.Unstructured, want string) {
	t.Helper()
	h, err := argocdtest.Evaluate(live.Object)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Argo CD health of %s %s: %s (%s)", live.GetKind(), live.GetName(), h.Status, h.Message)
	if h.Status != want {
		t.Errorf("%s %s: Argo CD health %s (%s), want %s", live.GetKind(), live.GetName(), h.Status, h.Message, want)
	}
}

// TestFluxLoop follows knc's output through a Flux GitOps loop: commits to
// a served repository, applied, pruned and health-checked as
// kustomize-controller does, with knc runtime reporting status and
// delivering events, and a Kustomization's Ready condition that follows
// knc's conditions at every step.
func TestFluxLoop(t *testing.T) {
	if testing.Short() {
		t.Skip("needs a real kube-apiserver and etcd and knc runtime processes")
	}
	env := kubetest.Current(t)
	ctx := t.Context()
	dyn := env.Applier(t).Dynamic()
	ns := env.Namespace(t)
	subscribers := rig.NewPathSink(t)
	get := func(gvr schema.GroupVersionResource, name string) (*unstructured.Unstructured, error) {
		return dyn.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
	}
	mustGet := func(gvr schema.GroupVersionResource, name string) *unstructured.Unstructured {
		t.Helper()
		u, err := get(gvr, name)
		if err != nil {
			t.Fatal(err)
		}
		return u
	}

	repo := platformRepo{gittest.New(t)}
	p := project{ns: ns, base: subscribers.URL, ordersType: "order", withAudit: true}
	repo.commit(t, p, "eventing: first revision", nil)
	src := newSource(t, repo.Serve("platform"))

	// eventing applies everything and waits on it (spec.wait); eventing-health
	// applies nothing and checks the Knative objects (spec.healthChecks).
	eventing := newKustomization(t, env.Config(), "eventing", "deploy")
	eventing.wait = true
	health := newKustomization(t, env.Config(), "eventing-health", "health")
	health.healthChecks = object.ObjMetadataSet{
		knativeID(ns, "eventing.knative.dev", "Broker", "default"),
		knativeID(ns, "eventing.knative.dev", "Trigger", "orders"),
		knativeID(ns, "eventing.knative.dev", "Trigger", "all"),
		knativeID(ns, "messaging.knative.dev", "Channel", "notes"),
		knativeID(ns, "messaging.knative.dev", "Subscription", "note"),
	}

	node := &nodeStandIn{dyn: dyn, ns: ns, table: rig.NewMountedTable(t.TempDir())}
	nodeCtx, stopNode := context.WithCancel(ctx)
	var nodeDone sync.WaitGroup
	nodeDone.Go(func() { node.run(nodeCtx) })
	t.Cleanup(func() {
		stopNode()
		nodeDone.Wait()
		if t.Failed() {
			t.Logf("last error of the kubelet stand-in: %v", node.lastErr.Load())
		}
	})

	// Step 1 and 2: applied before the runtime runs, nothing is Ready.
	rev := src.fetch(t)
	// The timeouts of the waits expected to fail fall between two polls
	// (one a second): a poll sent as the deadline passes fails in the
	// client's rate limiter, and fluxcd/pkg/ssa then reports that error
	// instead of the objects not yet Current.
	eventing.timeout, health.timeout = 5500*time.Millisecond, 5500*time.Millisecond
	eventing.reconcile(ctx, src.dir, rev)
	wantReady(t, "1 applied, no runtime yet", eventing, metav1.ConditionFalse, "HealthCheckFailed")
	// Until the runtime reports, knc's objects read back with
	// status.observedGeneration 0 (the CRDs' default), which kstatus takes
	// for not yet observed.
	notCurrent := []string{"Deployment/" + ns + "/knc-runtime status: 'InProgress'"}
	for _, id := range health.healthChecks {
		notCurrent = append(notCurrent, id.GroupKind.Kind+"/"+ns+"/"+id.Name+" status: 'InProgress'")
	}
	for _, want := range notCurrent {
		if !strings.Contains(eventing.ready.Message, want) {
			t.Errorf("eventing Ready message %q does not name %s", eventing.ready.Message, want)
		}
	}
	health.reconcile(ctx, src.dir, rev)
	wantReady(t, "1 applied, no runtime yet", health, metav1.ConditionFalse, "HealthCheckFailed")
	for _, want := range notCurrent[1:] {
		if !strings.Contains(health.ready.Message, want) {
			t.Errorf("eventing-health Ready message %q does not name %s", health.ready.Message, want)
		}
	}
	argoHealth(t, mustGet(triggers, "orders"), "Progressing")

	// The runtime starts as the ServiceAccount the output declares.
	saConfig, err := env.ServiceAccountConfig(ctx, ns, "knc-runtime")
	if err != nil {
		t.Fatal(err)
	}
	rig.Poll(t, ctx, time.Minute, func() error {
		if _, err := os.Stat(node.table.Path()); err != nil {
			return fmt.Errorf("routing table not mounted yet: %w", err)
		}
		return nil
	})
	rt := startRuntime(t, saConfig, ns, node.table)
	node.reloads = rt.Reloads
	node.up.Store(true)
	eventing.timeout, health.timeout = 2*time.Minute, 2*time.Minute
	eventing.reconcile(ctx, src.dir, rev)
	wantReady(t, "2 runtime reports", eventing, metav1.ConditionTrue, "ReconciliationSucceeded")
	health.reconcile(ctx, src.dir, rev)
	wantReady(t, "2 runtime reports", health, metav1.ConditionTrue, "ReconciliationSucceeded")
	for _, id := range health.healthChecks {
		gvr := map[string]schema.GroupVersionResource{"Broker": brokers, "Trigger": triggers, "Channel": channels, "Subscription": subscriptions}[id.GroupKind.Kind]
		live := mustGet(gvr, id.Name)
		if c := rig.Condition(live, "Ready"); c == nil || c["status"] != "True" {
			t.Errorf("%s %s Ready = %v while the Kustomization is Ready", id.GroupKind.Kind, id.Name, c)
		}
		argoHealth(t, live, "Healthy")
	}

	// Step 3: an event goes through.
	broker := rt.URL + "/brokers/" + ns + "/default"
	if code := post(ctx, broker, "e1", "order"); code != 202 {
		t.Fatalf("POST to the Broker: %d", code)
	}
	for _, path := range []string{"/orders", "/all", "/audit"} {
		subscribers.WaitFor(t, path, "e1")
	}

	t.Run("filter changed with no event lost", func(t *testing.T) {
		// Events of both types flow while the new filter is applied and
		// the runtime reloads its table; the Trigger all keeps every one.
		loadCtx, stopLoad := context.WithCancel(ctx)
		var (
			mu       sync.Mutex
			accepted []string
			sent     int
			load     sync.WaitGroup
		)
		load.Go(func() {
			// A steady trickle, not a load test.
			tick := time.NewTicker(20 * time.Millisecond)
			defer tick.Stop()
			for i := 0; loadCtx.Err() == nil; i++ {
				id, typ := fmt.Sprintf("load-%d", i), "order"
				if i%2 == 1 {
					typ = "refund"
				}
				code := post(loadCtx, broker, id, typ)
				mu.Lock()
				sent++
				if code == 202 {
					accepted = append(accepted, id)
				}
				mu.Unlock()
				select {
				case <-loadCtx.Done():
				case <-tick.C:
				}
			}
		})
		p.ordersType = "refund"
		repo.commit(t, p, "eventing: orders keeps refunds", nil)
		rev = src.fetch(t)
		eventing.reconcile(ctx, src.dir, rev)
		wantReady(t, "4 filter changed", eventing, metav1.ConditionTrue, "ReconciliationSucceeded")
		stopLoad()
		load.Wait()
		filter, _, _ := unstructured.NestedString(mustGet(triggers, "orders").Object, "spec", "filter", "attributes", "type")
		if filter != "refund" {
			t.Fatalf("orders filter %q after the reconcile, want refund", filter)
		}
		var lost []string
		rig.Poll(t, ctx, time.Minute, func() error {
			lost = lost[:0]
			for _, id := range accepted {
				if !subscribers.Received("/all", id) {
					lost = append(lost, id)
				}
			}
			if len(lost) > 0 {
				return fmt.Errorf("%d of %d accepted events not delivered to all yet (%v…)", len(lost), len(accepted), lost[:min(3, len(lost))])
			}
			return nil
		})
		t.Logf("FIGURES filter change: sent %d, accepted %d, delivered to all %d, lost %d", sent, len(accepted), len(accepted)-len(lost), len(lost))
		if len(accepted) == 0 {
			t.Fatal("no event was accepted during the change")
		}
		// The new filter is in force: an order no longer reaches orders, a
		// refund does.
		if code := post(ctx, broker, "e-order", "order"); code != 202 {
			t.Fatalf("POST: %d", code)
		}
		if code := post(ctx, broker, "e-refund", "refund"); code != 202 {
			t.Fatalf("POST: %d", code)
		}
		subscribers.WaitFor(t, "/orders", "e-refund")
		subscribers.WaitFor(t, "/all", "e-order")
		if subscribers.Received("/orders", "e-order") {
			t.Error("an order reached the Trigger orders after its filter became refund")
		}
	})

	t.Run("Trigger removed and pruned", func(t *testing.T) {
		p.withAudit = false
		repo.commit(t, p, "eventing: drop audit", nil)
		rev = src.fetch(t)
		eventing.reconcile(ctx, src.dir, rev)
		wantReady(t, "5 Trigger removed", eventing, metav1.ConditionTrue, "ReconciliationSucceeded")
		if _, err := get(triggers, "audit"); !apierrors.IsNotFound(err) {
			t.Fatalf("Trigger audit after the prune: %v, want NotFound", err)
		}
		if code := post(ctx, broker, "e5", "order"); code != 202 {
			t.Fatalf("POST: %d", code)
		}
		subscribers.WaitFor(t, "/all", "e5")
		if subscribers.Received("/audit", "e5") {
			t.Error("the pruned Trigger audit still received an event")
		}
	})

	t.Run("Trigger of a missing Broker", func(t *testing.T) {
		// knc build refuses this project, so the output is edited by hand.
		orphan := fmt.Sprintf("---\napiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: orphan\n  namespace: %s\nspec:\n  broker: missing\n  subscriber: {uri: \"%s/orphan\"}\n", ns, subscribers.URL)
		repo.commit(t, p, "eventing: a Trigger of a Broker that does not exist", func(deploy string) {
			f := filepath.Join(deploy, "namespaces", ns, "triggers.yaml")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(f, append(data, orphan...), 0o644); err != nil {
				t.Fatal(err)
			}
		})
		rev = src.fetch(t)
		eventing.timeout = 10500 * time.Millisecond
		eventing.reconcile(ctx, src.dir, rev)
		eventing.timeout = 2 * time.Minute
		wantReady(t, "6 missing Broker", eventing, metav1.ConditionFalse, "HealthCheckFailed")
		// kustomize-controller's message names each object that is not
		// Current and its kstatus, not the object's own condition
		// (fluxcd/pkg/ssa manager_wait.go, WaitForSetWithContext); the
		// reason is on the Trigger, where kstatus reads it.
		if want := "Trigger/" + ns + "/orphan status: 'InProgress'"; !strings.Contains(eventing.ready.Message, want) {
			t.Errorf("Ready message %q does not carry %q", eventing.ready.Message, want)
		}
		live := mustGet(triggers, "orphan")
		if c := rig.Condition(live, "Ready"); c == nil || c["status"] != "False" || c["reason"] != "BrokerDoesNotExist" {
			t.Errorf("orphan Ready = %v, want False BrokerDoesNotExist", c)
		}
		res, err := kstatus.Compute(live)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("kstatus of Trigger orphan: %s %q %v", res.Status, res.Message, res.Conditions)
		if res.Status != kstatus.InProgressStatus || len(res.Conditions) == 0 || res.Conditions[0].Reason != "BrokerDoesNotExist" {
			t.Errorf("kstatus of orphan %s %v, want InProgress with reason BrokerDoesNotExist", res.Status, res.Conditions)
		}
		argoHealth(t, live, "Degraded")

		repo.commit(t, p, "eventing: revert the Trigger of a missing Broker", nil)
		rev = src.fetch(t)
		eventing.reconcile(ctx, src.dir, rev)
		wantReady(t, "6 reverted", eventing, metav1.ConditionTrue, "ReconciliationSucceeded")
		if _, err := get(triggers, "orphan"); !apierrors.IsNotFound(err) {
			t.Errorf("Trigger orphan after the revert: %v, want NotFound", err)
		}
	})

	t.Run("spec edited by hand, restored", func(t *testing.T) {
		orders := mustGet(triggers, "orders")
		_ = unstructured.SetNestedField(orders.Object, "order", "spec", "filter", "attributes", "type")
		if _, err := dyn.Resource(triggers).Namespace(ns).Update(ctx, orders, metav1.UpdateOptions{FieldManager: "kubectl-edit"}); err != nil {
			t.Fatal(err)
		}
		var edited *unstructured.Unstructured
		rig.Poll(t, ctx, time.Minute, func() error {
			edited = mustGet(triggers, "orders")
			og, _, _ := unstructured.NestedInt64(edited.Object, "status", "observedGeneration")
			if c := rig.Condition(edited, "Ready"); og != edited.GetGeneration() || c == nil || c["reason"] != "NotCompiled" {
				return fmt.Errorf("orders: observedGeneration %d of %d, Ready %v; want NotCompiled", og, edited.GetGeneration(), c)
			}
			return nil
		})
		argoHealth(t, edited, "Degraded")
		// The next reconcile of the same revision corrects the drift.
		eventing.reconcile(ctx, src.dir, rev)
		wantReady(t, "7 drift corrected", eventing, metav1.ConditionTrue, "ReconciliationSucceeded")
		restored := mustGet(triggers, "orders")
		if filter, _, _ := unstructured.NestedString(restored.Object, "spec", "filter", "attributes", "type"); filter != "refund" {
			t.Errorf("orders filter %q after the reconcile, want refund restored", filter)
		}
		if restored.GetGeneration() <= edited.GetGeneration() {
			t.Errorf("generation %d after the restore, want more than %d", restored.GetGeneration(), edited.GetGeneration())
		}
		if c := rig.Condition(restored, "Ready"); c == nil || c["status"] != "True" {
			t.Errorf("orders Ready = %v after the restore, want True", c)
		}
		argoHealth(t, restored, "Healthy")
	})
}
