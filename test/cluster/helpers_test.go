package cluster

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the whole package, and
// runtimeBinary the runtime's own binary, which the image runs.
var kncBinary, runtimeBinary string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "knc-cluster-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	kncBinary = filepath.Join(dir, "knc")
	runtimeBinary = filepath.Join(dir, "knc-runtime")
	for bin, pkg := range map[string]string{kncBinary: "./cmd/knc", runtimeBinary: "./cmd/knc-runtime"} {
		args := []string{"build", "-o", bin}
		if raceEnabled {
			args = append(args, "-race")
		}
		build := exec.Command("go", append(args, "github.com/knc-dev/knc/"+strings.TrimPrefix(pkg, "./"))...)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "building", pkg+":", err)
			return 2
		}
	}
	return kubetest.Main(m)
}

var (
	brokers       = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"}
	triggers      = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"}
	channels      = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "channels"}
	subscriptions = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "subscriptions"}
	configMaps    = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// knativeResources maps the four kinds to their resources.
var knativeResources = map[string]schema.GroupVersionResource{
	"Broker": brokers, "Trigger": triggers, "Channel": channels, "Subscription": subscriptions,
}

// cluster is the API server and the admin clients the test applies with.
type cluster struct {
	env *kubetest.Env
	*kubetest.Applier
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	env := kubetest.Current(t)
	return &cluster{env: env, Applier: env.Applier(t)}
}

// knc runs the knc binary and returns its standard output.
func knc(t testing.TB, args ...string) string {
	t.Helper()
	cmd := exec.Command(kncBinary, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("knc %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return stdout.String()
}

// build runs knc build on dir and returns the objects of its output, as
// kustomize builds them for Flux or Argo CD.
func build(t testing.TB, dir string) (string, []*unstructured.Unstructured) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	knc(t, "build", dir, "-o", out)
	objs, err := kubetest.Kustomize(out)
	if err != nil {
		t.Fatal(err)
	}
	return out, objs
}

// deploy server-side applies objs (CRDs and namespaces first, each waited
// for), as the GitOps tools do, and aggregates the ClusterRoles as the
// controller manager would.
func (c *cluster) deploy(t testing.TB, objs []*unstructured.Unstructured) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := c.Apply(ctx, objs, kubetest.ApplyOptions{FieldManager: "gitops"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.env.AggregateClusterRoles(ctx); err != nil {
		t.Fatal(err)
	}
}

// poll calls f until it returns nil, and fails the test with its last

// mount writes data as the routing ConfigMap's new content in table.
func mount(t testing.TB, table *rig.MountedTable, data []byte) {
	t.Helper()
	if err := table.Update(data); err != nil {
		t.Fatal(err)
	}
}

// routesConfigMap returns the routing table of namespace ns as the
// kubelet would mount it: the ConfigMap the runtime's Deployment names.
func (c *cluster) routesConfigMap(t testing.TB, ns string) []byte {
	t.Helper()
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	d, err := c.Dynamic().Resource(deployments).Namespace(ns).Get(t.Context(), "knc-runtime", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	volumes, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	var name string
	for _, v := range volumes {
		m, _ := v.(map[string]any)
		if m["name"] == "routing" {
			name, _, _ = unstructured.NestedString(m, "configMap", "name")
		}
	}
	if name == "" {
		t.Fatalf("the runtime Deployment of %s mounts no routing ConfigMap", ns)
	}
	cm, err := c.Dynamic().Resource(configMaps).Namespace(ns).Get(t.Context(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, _, _ := unstructured.NestedString(cm.Object, "data", "table.json")
	return []byte(data)
}

// startRuntime runs knc runtime for namespace ns with a token of the
// ServiceAccount knc build generated for it, so with exactly its RBAC, and
// with args after its own flags.
func (c *cluster) startRuntime(t testing.TB, ns string, table *rig.MountedTable, args ...string) *rig.ClusterRuntime {
	t.Helper()
	cfg, err := c.env.ServiceAccountConfig(t.Context(), ns, "knc-runtime")
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig, err := kubetest.KubeConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rig.StartClusterRuntime(t, runtimeBinary, kubeconfig, ns, table.Path(), args...)
}

// post sends a binary-mode CloudEvent to the runtime's ingress at path.
func post(t testing.TB, url, id, eventType string) int {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "test/cluster")
	req.Header.Set("Ce-Type", eventType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
