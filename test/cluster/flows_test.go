package cluster

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/test/rig"
)

// flowsProject is a Sequence and a Parallel in the shape of Knative's
// documentation (steps, filters and subscribers that are Knative Services,
// an InMemoryChannel template, a reply), with the Services declared under
// external in knc.yaml at base, a loopback server, so that their routes
// run in this cluster without DNS.
func flowsProject(t testing.TB, ns, base string) string {
	t.Helper()
	services := []string{"first", "second", "third", "event-display", "even-filter", "even-transformer", "odd-filter", "odd-transformer"}
	config := fmt.Sprintf("apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: %s\nexternal:\n", ns)
	for _, s := range services {
		config += fmt.Sprintf("- {apiVersion: serving.knative.dev/v1, kind: Service, name: %s, url: %q}\n", s, base+"/"+s)
	}
	files := map[string]string{
		"knc.yaml":       config,
		"namespace.yaml": fmt.Sprintf("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns),
		"sequence.yaml": `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata:
  name: sequence
spec:
  channelTemplate:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
  steps:
    - ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: first
    - ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: second
    - ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: third
  reply:
    ref:
      kind: Service
      apiVersion: serving.knative.dev/v1
      name: event-display
`,
		"parallel.yaml": `apiVersion: flows.knative.dev/v1
kind: Parallel
metadata:
  name: odd-even-parallel
spec:
  channelTemplate:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
  branches:
    - filter:
        ref:
          apiVersion: serving.knative.dev/v1
          kind: Service
          name: even-filter
      subscriber:
        ref:
          apiVersion: serving.knative.dev/v1
          kind: Service
          name: even-transformer
    - filter:
        ref:
          apiVersion: serving.knative.dev/v1
          kind: Service
          name: odd-filter
      subscriber:
        ref:
          apiVersion: serving.knative.dev/v1
          kind: Service
          name: odd-transformer
  reply:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: event-display
`,
	}
	dir := t.TempDir()
	for name, content := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// services stands in for the Knative Services of flowsProject: each step
// and transformer replies with an event of its own type, even-filter lets
// every event through and odd-filter none.
type services struct {
	mu   sync.Mutex
	seen map[string][]string // path to the types received
}

func (s *services) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	name := r.URL.Path[1:]
	s.mu.Lock()
	s.seen[name] = append(s.seen[name], r.Header.Get("Ce-Type"))
	s.mu.Unlock()
	reply := name + ".done"
	switch name {
	case "event-display", "odd-filter":
		w.WriteHeader(http.StatusAccepted)
		return
	case "even-filter":
		reply = r.Header.Get("Ce-Type")
	}
	w.Header().Set("Ce-Specversion", "1.0")
	w.Header().Set("Ce-Id", name+"-"+r.Header.Get("Ce-Id"))
	w.Header().Set("Ce-Source", "/"+name)
	w.Header().Set("Ce-Type", reply)
	w.WriteHeader(http.StatusOK)
}

func (s *services) received(name string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.seen[name])
}

var (
	sequencesResource = schema.GroupVersionResource{Group: "flows.knative.dev", Version: "v1", Resource: "sequences"}
	parallelsResource = schema.GroupVersionResource{Group: "flows.knative.dev", Version: "v1", Resource: "parallels"}
)

// waitFlowReady waits until the runtime has written a flow's status: Ready,
// ChannelsReady and SubscriptionsReady True for the applied generation,
// its ingress Channel's address, and a status of each part (list, n long).
func (c *cluster) waitFlowReady(t testing.TB, r schema.GroupVersionResource, ns, name, ingress, list string, n int) {
	t.Helper()
	rig.Poll(t, t.Context(), time.Minute, func() error {
		u, err := c.Dynamic().Resource(r).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		og, _, _ := unstructured.NestedInt64(u.Object, "status", "observedGeneration")
		if og != u.GetGeneration() {
			return fmt.Errorf("%s %s: observedGeneration %d, generation %d", r.Resource, name, og, u.GetGeneration())
		}
		for _, typ := range []string{"Ready", "ChannelsReady", "SubscriptionsReady", "Addressable"} {
			if cond := rig.Condition(u, typ); cond == nil || cond["status"] != "True" {
				return fmt.Errorf("%s %s: %s is %v", r.Resource, name, typ, cond)
			}
		}
		url, _, _ := unstructured.NestedString(u.Object, "status", "address", "url")
		if want := fmt.Sprintf("http://knc-ingress.%s.svc.cluster.local/channels/%s/%s", ns, ns, ingress); url != want {
			return fmt.Errorf("%s %s: address %q, want %q", r.Resource, name, url, want)
		}
		parts, _, _ := unstructured.NestedSlice(u.Object, "status", list)
		if len(parts) != n {
			return fmt.Errorf("%s %s: %d %s, want %d", r.Resource, name, len(parts), list, n)
		}
		return nil
	})
}

// TestFlowsFromKnativeDocs builds a Sequence and a Parallel written as
// Knative's documentation writes them, applies the output with knc's
// CRDs, and checks that the API server accepts every object (the flows
// and the Channels and Subscriptions they compile into), that those
// become Ready under the runtime, and that events run through them.
func TestFlowsFromKnativeDocs(t *testing.T) {
	c := newCluster(t)
	const ns = "flows"
	svc := &services{seen: map[string][]string{}}
	srv := httptest.NewServer(svc)
	t.Cleanup(srv.Close)
	_, objs := build(t, flowsProject(t, ns, srv.URL))

	var kinds []string
	for _, o := range objs {
		if g := o.GroupVersionKind().Group; g == "flows.knative.dev" || g == "messaging.knative.dev" {
			kinds = append(kinds, o.GetKind()+" "+o.GetName())
		}
	}
	slices.Sort(kinds)
	want := []string{
		"Channel odd-even-parallel-kn-parallel", "Channel odd-even-parallel-kn-parallel-0", "Channel odd-even-parallel-kn-parallel-1",
		"Channel sequence-kn-sequence-0", "Channel sequence-kn-sequence-1", "Channel sequence-kn-sequence-2",
		"Parallel odd-even-parallel", "Sequence sequence",
		"Subscription odd-even-parallel-kn-parallel-0", "Subscription odd-even-parallel-kn-parallel-1",
		"Subscription odd-even-parallel-kn-parallel-filter-0", "Subscription odd-even-parallel-kn-parallel-filter-1",
		"Subscription sequence-kn-sequence-0", "Subscription sequence-kn-sequence-1", "Subscription sequence-kn-sequence-2",
	}
	if !slices.Equal(kinds, want) {
		t.Fatalf("knc build wrote %q,\nwant %q", kinds, want)
	}

	c.deploy(t, objs)
	for _, r := range []schema.GroupVersionResource{sequencesResource, parallelsResource} {
		list, err := c.Dynamic().Resource(r).Namespace(ns).List(t.Context(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list.Items) != 1 {
			t.Errorf("%s: %d objects in the cluster, want 1", r.Resource, len(list.Items))
		}
	}
	// A step's reply goes to the next step's Channel at its address, the
	// knc-ingress Service, which this cluster has no DNS for. The runtime
	// sends through the proxy of its environment, as Go's HTTP client
	// does, and never for loopback addresses: a proxy here stands in for
	// the Service, sending its requests to the runtime's ingress.
	var ingress atomic.Pointer[url.URL]
	proxy := httptest.NewServer(&httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		if r.In.URL.Host != "knc-ingress."+ns+".svc.cluster.local" {
			t.Errorf("the runtime sent %s through the proxy; only the ingress Service's requests should go there", r.In.URL)
		}
		r.SetURL(ingress.Load())
	}})
	t.Cleanup(proxy.Close)
	t.Setenv("HTTP_PROXY", proxy.URL)
	runtimes := c.startRuntimes(t, objs)
	base := runtimes[ns].URL
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	ingress.Store(u)
	c.waitReady(t, knative(objs))
	c.waitFlowReady(t, sequencesResource, ns, "sequence", "sequence-kn-sequence-0", "channelStatuses", 3)
	c.waitFlowReady(t, parallelsResource, ns, "odd-even-parallel", "odd-even-parallel-kn-parallel", "branchStatuses", 2)
	if code := post(t, base+"/channels/"+ns+"/sequence-kn-sequence-0", "order-1", "order"); code != http.StatusAccepted {
		t.Fatalf("POST to the Sequence's address: %d, want 202", code)
	}
	if code := post(t, base+"/channels/"+ns+"/odd-even-parallel-kn-parallel", "order-2", "number"); code != http.StatusAccepted {
		t.Fatalf("POST to the Parallel's address: %d, want 202", code)
	}
	rig.Poll(t, t.Context(), time.Minute, func() error {
		got := svc.received("event-display")
		slices.Sort(got)
		if !slices.Equal(got, []string{"even-transformer.done", "third.done"}) {
			return fmt.Errorf("event-display received %q, want the Sequence's last reply and the even branch's", got)
		}
		return nil
	})
	for name, want := range map[string][]string{
		"first": {"order"}, "second": {"first.done"}, "third": {"second.done"},
		"even-filter": {"number"}, "odd-filter": {"number"}, "even-transformer": {"number"},
	} {
		if got := svc.received(name); !slices.Equal(got, want) {
			t.Errorf("%s received %q, want %q", name, got, want)
		}
	}
	if got := svc.received("odd-transformer"); len(got) != 0 {
		t.Errorf("odd-transformer received %q; its filter refused the event", got)
	}
}
