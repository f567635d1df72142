package cluster

import (
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	kstatus "sigs.k8s.io/cli-utils/pkg/kstatus/status"

	"github.com/knc-dev/knc/compiler/render/argocd/argocdtest"
	rtcluster "github.com/knc-dev/knc/runtime/cluster"
	"github.com/knc-dev/knc/test/rig"
)

// readyErr says why a live object is not Ready=True with every field knc
// must set for the generation it has.
func readyErr(u *unstructured.Unstructured) error {
	name := u.GetKind() + " " + u.GetNamespace() + "/" + u.GetName()
	og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	if og != u.GetGeneration() {
		return fmt.Errorf("%s: observedGeneration %d, generation %d", name, og, u.GetGeneration())
	}
	if c := rig.Condition(u, "Ready"); c == nil || c["status"] != "True" {
		return fmt.Errorf("%s: Ready is %v", name, c)
	}
	str := func(path ...string) string {
		s, _, _ := unstructured.NestedString(u.Object, append([]string{"status"}, path...)...)
		return s
	}
	// A dead-letter sink must be resolved before Ready, as the subscriber is.
	if _, ok, _ := unstructured.NestedMap(u.Object, "spec", "delivery", "deadLetterSink"); ok {
		if str("deadLetterSinkUri") == "" && str("physicalSubscription", "deadLetterSinkUri") == "" {
			return fmt.Errorf("%s: dead-letter sink not reported", name)
		}
	}
	switch u.GetKind() {
	case "Broker":
		if want := fmt.Sprintf("http://knc-ingress.%s.svc.cluster.local/brokers/%s/%s", u.GetNamespace(), u.GetNamespace(), u.GetName()); str("address", "url") != want {
			return fmt.Errorf("%s: address %q, want %q", name, str("address", "url"), want)
		}
	case "Channel":
		if want := fmt.Sprintf("http://knc-ingress.%s.svc.cluster.local/channels/%s/%s", u.GetNamespace(), u.GetNamespace(), u.GetName()); str("address", "url") != want {
			return fmt.Errorf("%s: address %q, want %q", name, str("address", "url"), want)
		}
		subs, _, _ := unstructured.NestedSlice(u.Object, "status", "subscribers")
		for _, s := range subs {
			m := s.(map[string]any)
			if m["uid"] == "" || m["uid"] == nil || m["ready"] != "True" || m["observedGeneration"] == nil {
				return fmt.Errorf("%s: subscriber %v", name, m)
			}
		}
		if str("channel", "kind") == "" {
			return fmt.Errorf("%s: no status.channel", name)
		}
	case "Trigger":
		if str("subscriberUri") == "" {
			return fmt.Errorf("%s: no subscriberUri", name)
		}
	case "Subscription":
		if str("physicalSubscription", "subscriberUri") == "" && str("physicalSubscription", "replyUri") == "" {
			return fmt.Errorf("%s: no physicalSubscription", name)
		}
	}
	return nil
}

// knative returns the Brokers, Triggers, Channels and Subscriptions of objs.
func knative(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if _, ok := knativeResources[o.GetKind()]; ok {
			out = append(out, o)
		}
	}
	return out
}

// runtimeNamespaces returns the namespaces knc build deploys a runtime to.
func runtimeNamespaces(objs []*unstructured.Unstructured) []string {
	var out []string
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == "knc-runtime" {
			out = append(out, o.GetNamespace())
		}
	}
	return out
}

func (c *cluster) live(t testing.TB, o *unstructured.Unstructured) *unstructured.Unstructured {
	t.Helper()
	got, err := c.Dynamic().Resource(knativeResources[o.GetKind()]).Namespace(o.GetNamespace()).Get(t.Context(), o.GetName(), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// waitReady waits until every object is Ready=True with its fields set.
func (c *cluster) waitReady(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	rig.Poll(t, t.Context(), time.Minute, func() error {
		for _, o := range objs {
			got, err := c.Dynamic().Resource(knativeResources[o.GetKind()]).Namespace(o.GetNamespace()).Get(t.Context(), o.GetName(), metav1.GetOptions{})
			if err != nil {
				return err
			}
			if err := readyErr(got); err != nil {
				return err
			}
		}
		return nil
	})
}

// startRuntimes mounts each namespace's routing table and starts its
// runtime.
func (c *cluster) startRuntimes(t testing.TB, objs []*unstructured.Unstructured) map[string]*rig.ClusterRuntime {
	t.Helper()
	out := map[string]*rig.ClusterRuntime{}
	for _, ns := range runtimeNamespaces(objs) {
		table := rig.NewMountedTable(t.TempDir())
		mount(t, table, c.routesConfigMap(t, ns))
		out[ns] = c.startRuntime(t, ns, table)
	}
	return out
}

// TestExamples applies the output of knc build for the examples, runs a
// runtime per namespace with the generated RBAC, and checks that every
// object becomes Ready with its fields, that GitOps health checks read it
// as healthy, and that the Brokers and Channels accept events.
func TestExamples(t *testing.T) {
	c := newCluster(t)
	for _, example := range []string{"quickstart", "multi-namespace"} {
		t.Run(example, func(t *testing.T) {
			_, objs := build(t, filepath.Join("..", "..", "examples", example))
			c.deploy(t, objs)
			applied := map[string]string{}
			for _, o := range knative(objs) {
				applied[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] = c.live(t, o).GetResourceVersion()
			}
			runtimes := c.startRuntimes(t, objs)
			for ns := range runtimes {
				c.checkRuntimeRBAC(t, ns)
			}
			c.waitReady(t, knative(objs))

			for _, o := range knative(objs) {
				live := c.live(t, o)
				name := o.GetKind() + " " + o.GetNamespace() + "/" + o.GetName()
				// Status writes never touch the spec, so the generation
				// stays that of the one apply.
				if live.GetGeneration() != 1 {
					t.Errorf("%s: generation %d after status writes, want 1", name, live.GetGeneration())
				}
				if live.GetResourceVersion() == applied[o.GetKind()+"/"+o.GetNamespace()+"/"+o.GetName()] {
					t.Errorf("%s: resourceVersion unchanged: no status was written", name)
				}
				res, err := kstatus.Compute(live)
				if err != nil {
					t.Fatal(err)
				}
				if res.Status != kstatus.CurrentStatus {
					t.Errorf("%s: kstatus %s (%s), want Current", name, res.Status, res.Message)
				}
				checkSpecHash(t, live)
				checkArgoCDHealth(t, live, "Healthy")
			}
			for ns, rt := range runtimes {
				for _, o := range knative(objs) {
					if o.GetNamespace() != ns || (o.GetKind() != "Broker" && o.GetKind() != "Channel") {
						continue
					}
					path := "/" + strings.ToLower(o.GetKind()) + "s/" + ns + "/" + o.GetName()
					if code := post(t, rt.URL+path, "e-"+o.GetName(), "com.example.test"); code != 202 {
						t.Errorf("POST %s: %d, want 202", path, code)
					}
				}
				checkLivePage(t, rt, ns, knative(objs))
			}
		})
	}
}

// checkLivePage reads the live page's state on the runtime's admin
// listener: every object of namespace ns Ready, and each Broker and
// Channel counting the one event it was sent. The ingress listener, which
// the knc-ingress Service exposes, serves neither the page nor /status
// and /metrics: whoever may send events may not read them.
func checkLivePage(t testing.TB, rt *rig.ClusterRuntime, ns string, objs []*unstructured.Unstructured) {
	t.Helper()
	for _, path := range []string{"/ui", "/status", "/metrics"} {
		resp, err := http.Get(rt.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s on the ingress listener: %d, want 404", path, resp.StatusCode)
		}
	}
	type nodeState struct {
		Ready  *struct{ Status string }
		Counts struct{ Accepted int }
	}
	rig.Poll(t, t.Context(), 30*time.Second, func() error {
		resp, err := http.Get(rt.AdminURL + "/ui/api/state")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var state struct{ Nodes map[string]nodeState }
		if err := json.NewDecoder(resp.Body).Decode(&state); err != nil {
			return fmt.Errorf("the live page's state: %w", err)
		}
		var pending []string
		for _, o := range objs {
			if o.GetNamespace() != ns {
				continue
			}
			id := o.GetKind() + "/" + ns + "/" + o.GetName()
			n, ok := state.Nodes[id]
			switch {
			case !ok:
				pending = append(pending, id+" is not on the page")
			case n.Ready == nil || n.Ready.Status != "True":
				pending = append(pending, id+" is not Ready on the page")
			case (o.GetKind() == "Broker" || o.GetKind() == "Channel") && n.Counts.Accepted != 1:
				pending = append(pending, fmt.Sprintf("%s accepted %d, want 1", id, n.Counts.Accepted))
			}
		}
		if len(pending) > 0 {
			return fmt.Errorf("the live page of %s: %v", ns, pending)
		}
		return nil
	})
}

// checkSpecHash checks that the runtime hashes a live spec, read back from
// the API server, exactly as the compiler hashed it into the
// knc.dev/spec-hash annotation.
func checkSpecHash(t testing.TB, live *unstructured.Unstructured) {
	t.Helper()
	want := live.GetAnnotations()["knc.dev/spec-hash"]
	spec, _, _ := unstructured.NestedMap(live.Object, "spec")
	if live.GetKind() == "Broker" {
		// The CRD defaults config to {} after knc hashed the spec; see
		// runtime/cluster.
		if cfg, ok := spec["config"].(map[string]any); ok && len(cfg) == 0 {
			delete(spec, "config")
		}
	}
	got, err := rtcluster.SpecHash(live.GetKind(), spec)
	if err != nil {
		t.Fatalf("%s %s: %v", live.GetKind(), live.GetName(), err)
	}
	if got != want {
		t.Errorf("%s %s/%s: runtime hash %s, compiler hash %s", live.GetKind(), live.GetNamespace(), live.GetName(), got, want)
	}
}

// checkArgoCDHealth runs the health check knc build --argocd-health emits
// on a live object, as Argo CD would.
func checkArgoCDHealth(t testing.TB, live *unstructured.Unstructured, want string) {
	t.Helper()
	h, err := argocdtest.Evaluate(live.Object)
	if err != nil {
		t.Fatal(err)
	}
	if h.Status != want {
		t.Errorf("%s %s/%s: Argo CD health %s (%s), want %s", live.GetKind(), live.GetNamespace(), live.GetName(), h.Status, h.Message, want)
	}
}

// checkRuntimeRBAC asks the API server what the runtime's ServiceAccount
// may do in its namespace: read the four kinds and patch their status,
// and nothing else to them.
func (c *cluster) checkRuntimeRBAC(t testing.TB, ns string) {
	t.Helper()
	user := "system:serviceaccount:" + ns + ":knc-runtime"
	groups := []string{"system:serviceaccounts", "system:serviceaccounts:" + ns, "system:authenticated"}
	for _, tt := range []struct {
		verb, group, resource, subresource string
		allowed                            bool
	}{
		{"list", "eventing.knative.dev", "triggers", "", true},
		{"watch", "messaging.knative.dev", "subscriptions", "", true},
		{"patch", "eventing.knative.dev", "brokers", "status", true},
		{"patch", "messaging.knative.dev", "channels", "status", true},
		{"update", "eventing.knative.dev", "triggers", "status", false},
		{"update", "eventing.knative.dev", "triggers", "", false},
		{"patch", "messaging.knative.dev", "subscriptions", "", false},
		{"create", "eventing.knative.dev", "brokers", "", false},
		{"delete", "messaging.knative.dev", "channels", "", false},
		{"list", "", "services", "", true},
		{"list", "", "secrets", "", false},
		{"update", "", "configmaps", "", false},
	} {
		sar := &authorizationv1.SubjectAccessReview{Spec: authorizationv1.SubjectAccessReviewSpec{
			User: user, Groups: groups,
			ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: tt.verb, Group: tt.group, Resource: tt.resource, Subresource: tt.subresource,
			},
		}}
		got, err := c.env.Clientset().AuthorizationV1().SubjectAccessReviews().Create(t.Context(), sar, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got.Status.Allowed != tt.allowed {
			t.Errorf("%s may %s %s %s/%s: %v, want %v", user, tt.verb, tt.group, tt.resource, tt.subresource, got.Status.Allowed, tt.allowed)
		}
	}
}
