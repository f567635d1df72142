package examples_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/plugins"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// examples lists every example; a new directory must be added here, and
// TestEveryExampleIsTested checks that none is forgotten.
var examples = []string{"quickstart", "multi-namespace", "plugin", "policies", "sources"}

func TestEveryExampleIsTested(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(examples)), dirs); diff != "" {
		t.Errorf("example directories (-tested +present):\n%s", diff)
	}
}

// buildExample runs knc build on an example and returns its output
// directory.
func buildExample(t *testing.T, name string) string {
	t.Helper()
	dir, err := filepath.Abs(name)
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("%s is invalid:\n%v", name, res.Diagnostics)
	}
	out, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends, Root: filepath.Dir(res.Config.File)})
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) > 0 {
		t.Fatalf("%s does not build:\n%v", name, diags)
	}
	outDir := filepath.Join(t.TempDir(), "out")
	if err := out.Write(outDir); err != nil {
		t.Fatal(err)
	}
	return outDir
}

// kustomize builds dir as Flux and Argo CD do.
func kustomize(t *testing.T, dir string) []*unstructured.Unstructured {
	t.Helper()
	objs, err := kubetest.Kustomize(dir)
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

func TestExamplesBuild(t *testing.T) {
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			dir := buildExample(t, name)
			objs := kustomize(t, dir)
			kinds := map[string]int{}
			for _, o := range objs {
				kinds[o.GetKind()]++
			}
			if kinds["CustomResourceDefinition"] != 7 {
				t.Errorf("%d CRDs, want 7: the four kinds, Sequence, Parallel and PingSource", kinds["CustomResourceDefinition"])
			}
			if kinds["Broker"]+kinds["Channel"] == 0 {
				t.Error("no Brokers or Channels")
			}
			// Each namespace directory builds on its own too, as a Flux
			// Kustomization pointed at it would.
			nss, err := os.ReadDir(filepath.Join(dir, render.NamespacesDir))
			if err != nil {
				t.Fatal(err)
			}
			total := 0
			for _, ns := range nss {
				total += len(kustomize(t, filepath.Join(dir, render.NamespacesDir, ns.Name())))
			}
			if total == 0 {
				t.Error("the namespace directories are empty")
			}
		})
	}
}

// TestPluginExample checks what the example's CUE plugins render.
func TestPluginExample(t *testing.T) {
	objs := kustomize(t, buildExample(t, "plugin"))
	var got []string
	for _, o := range objs {
		if o.GetNamespace() == "plugin-demo" && o.GetLabels()["app.kubernetes.io/name"] != "knc" {
			got = append(got, o.GetKind()+" "+o.GetName())
		}
	}
	slices.Sort(got)
	want := []string{
		"Broker audit", "Broker metrics", "Channel alerts",
		"ConfigMap relay-settings", "ConfigMap webhook-alerts",
		"Deployment relay-audit", "Deployment relay-metrics",
		"Service relay-audit", "Service relay-metrics",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects (-want +got):\n%s", diff)
	}
	for _, o := range objs {
		if o.GetKind() == "Deployment" && o.GetName() == plugins.RuntimeName {
			t.Error("knc renders its runtime for classes it does not run")
		}
	}
}

// cluster is an API server and the clients to apply objects to it.
type cluster struct {
	env *kubetest.Env
	*kubetest.Applier
}

func newCluster(t *testing.T) *cluster {
	env := kubetest.Current(t)
	return &cluster{env: env, Applier: env.Applier(t)}
}

// renamespace maps every namespace of the output to a fresh one, so that
// tests (and repeated runs against one API server) never share a
// namespace. Only what the API server checks is rewritten: object
// namespaces, Namespace objects and the subjects of RoleBindings.
func renamespace(objs []*unstructured.Unstructured) map[string]string {
	suffix := make([]byte, 3)
	_, _ = rand.Read(suffix)
	mapping := map[string]string{}
	to := func(ns string) string {
		if ns == "" {
			return ""
		}
		if m, ok := mapping[ns]; ok {
			return m
		}
		m := ns + "-" + hex.EncodeToString(suffix)
		mapping[ns] = m
		return m
	}
	for _, o := range objs {
		if o.GetKind() == "Namespace" {
			o.SetName(to(o.GetName()))
			continue
		}
		o.SetNamespace(to(o.GetNamespace()))
		if o.GetKind() == "RoleBinding" {
			subjects, _, _ := unstructured.NestedSlice(o.Object, "subjects")
			for _, s := range subjects {
				m := s.(map[string]any)
				if ns, ok := m["namespace"].(string); ok {
					m["namespace"] = to(ns)
				}
			}
			_ = unstructured.SetNestedSlice(o.Object, subjects, "subjects")
		}
	}
	return mapping
}

// applyExample applies an example's output in three steps (CRDs, then
// namespaces, then the rest), each first as a server-side dry run, and
// returns the objects and the namespace mapping.
func applyExample(t *testing.T, c *cluster, name string) ([]*unstructured.Unstructured, map[string]string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	objs := kustomize(t, buildExample(t, name))
	mapping := renamespace(objs)
	objs = append(knativeSourceCRDs(objs), objs...)
	if err := c.Apply(ctx, objs, kubetest.ApplyOptions{FieldManager: "knc-examples-test", DryRunFirst: true}); err != nil {
		t.Fatal(err)
	}
	return objs, mapping
}

// knativeSourceCRDs stands in for Knative's installation of its sources:
// knc writes the CRDs of the kinds its runtime serves, and an
// ApiServerSource or a ContainerSource is applied to a cluster where
// Knative runs them, which has their CRDs. Each is one version, v1,
// namespaced, with any fields, as schemaless as a test of knc's output
// needs.
func knativeSourceCRDs(objs []*unstructured.Unstructured) []*unstructured.Unstructured {
	have := map[string]bool{}
	for _, o := range objs {
		if o.GetKind() == "CustomResourceDefinition" {
			have[o.GetName()] = true
		}
	}
	var out []*unstructured.Unstructured
	for _, o := range objs {
		gvk := o.GroupVersionKind()
		if gvk.Group != "sources.knative.dev" || gvk.Version != "v1" {
			continue
		}
		plural := strings.ToLower(gvk.Kind) + "s"
		name := plural + "." + gvk.Group
		if have[name] {
			continue
		}
		have[name] = true
		out = append(out, &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apiextensions.k8s.io/v1",
			"kind":       "CustomResourceDefinition",
			"metadata":   map[string]any{"name": name},
			"spec": map[string]any{
				"group": gvk.Group,
				"scope": "Namespaced",
				"names": map[string]any{"kind": gvk.Kind, "plural": plural, "singular": strings.ToLower(gvk.Kind), "listKind": gvk.Kind + "List"},
				"versions": []any{map[string]any{
					"name": "v1", "served": true, "storage": true,
					"schema":       map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}},
					"subresources": map[string]any{"status": map[string]any{}},
				}},
			},
		}})
	}
	return out
}

// TestExamplesApply applies each example's output to a real API server.
func TestExamplesApply(t *testing.T) {
	c := newCluster(t)
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			objs, _ := applyExample(t, c, name)
			// Every object is there, as applied.
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			for _, o := range objs {
				r, err := c.Resource(o)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := r.Get(ctx, o.GetName(), metav1.GetOptions{}); err != nil {
					t.Errorf("%s %s/%s: %v", o.GetKind(), o.GetNamespace(), o.GetName(), err)
				}
			}
		})
	}
}

var (
	brokers       = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"}
	triggers      = schema.GroupVersionResource{Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"}
	channels      = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "channels"}
	subscriptions = schema.GroupVersionResource{Group: "messaging.knative.dev", Version: "v1", Resource: "subscriptions"}
)

// TestStatusAndPrinterColumns writes a Broker's status through /status, as
// the runtime does, and reads it back as kubectl get shows it.
func TestStatusAndPrinterColumns(t *testing.T) {
	c := newCluster(t)
	_, mapping := applyExample(t, c, "quickstart")
	ns := mapping["quickstart"]
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r := c.Dynamic().Resource(brokers).Namespace(ns)
	b, err := r.Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	url := "http://knc-ingress." + ns + ".svc.cluster.local/brokers/" + ns + "/default"
	_ = unstructured.SetNestedField(b.Object, url, "status", "address", "url")
	_ = unstructured.SetNestedSlice(b.Object, []any{map[string]any{"type": "Ready", "status": "True", "reason": "Serving"}}, "status", "conditions")
	if _, err := r.UpdateStatus(ctx, b, metav1.UpdateOptions{}); err != nil {
		t.Fatalf("updating /status: %v", err)
	}

	cs, err := kubernetes.NewForConfig(c.env.Config())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := cs.CoreV1().RESTClient().Get().
		AbsPath("/apis/eventing.knative.dev/v1/namespaces/"+ns+"/brokers").
		SetHeader("Accept", "application/json;as=Table;v=v1;g=meta.k8s.io").
		Do(ctx).Raw()
	if err != nil {
		t.Fatal(err)
	}
	var table metav1.Table
	if err := json.Unmarshal(raw, &table); err != nil {
		t.Fatal(err)
	}
	var columns []string
	for _, col := range table.ColumnDefinitions {
		columns = append(columns, col.Name)
	}
	if diff := cmp.Diff([]string{"Name", "URL", "Age", "Ready", "Reason"}, columns); diff != "" {
		t.Errorf("columns (-want +got):\n%s", diff)
	}
	if len(table.Rows) != 1 {
		t.Fatalf("%d rows", len(table.Rows))
	}
	cells := table.Rows[0].Cells
	got := []any{cells[0], cells[1], cells[3], cells[4]}
	if diff := cmp.Diff([]any{"default", url, "True", "Serving"}, got); diff != "" {
		t.Errorf("row (-want +got):\n%s", diff)
	}
}

// TestImmutableFieldsRefused edits each field the control-plane contract
// makes immutable and expects the API server to refuse the change.
func TestImmutableFieldsRefused(t *testing.T) {
	c := newCluster(t)
	_, mapping := applyExample(t, c, "quickstart")
	ns := mapping["quickstart"]
	tests := []struct {
		name     string
		resource schema.GroupVersionResource
		object   string
		patch    string
		message  string
	}{
		{"trigger broker", triggers, "order-created", `{"spec":{"broker":"other"}}`, "spec.broker is immutable"},
		{"subscription channel", subscriptions, "email", `{"spec":{"channel":{"name":"other"}}}`, "spec.channel is immutable"},
		{"channel template", channels, "notifications", `{"spec":{"channelTemplate":{"apiVersion":"messaging.knative.dev/v1","kind":"InMemoryChannel"}}}`, "spec.channelTemplate is immutable"},
		{"broker config", brokers, "default", `{"spec":{"config":{"apiVersion":"v1","kind":"ConfigMap","name":"other"}}}`, "spec.config is immutable"},
		{"broker class", brokers, "default", `{"metadata":{"annotations":{"eventing.knative.dev/broker.class":"MTChannelBasedBroker"}}}`, "broker.class is immutable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			r := c.Dynamic().Resource(tt.resource).Namespace(ns)
			// An admission policy takes effect a moment after it is
			// created (CRD rules at once), so wait with dry runs, which
			// change nothing, until the change is refused.
			err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
				_, err := r.Patch(ctx, tt.object, types.MergePatchType, []byte(tt.patch), metav1.PatchOptions{DryRun: []string{metav1.DryRunAll}})
				return err != nil, nil
			})
			if err != nil {
				t.Fatalf("patch %s is still accepted: %v", tt.patch, err)
			}
			_, err = r.Patch(ctx, tt.object, types.MergePatchType, []byte(tt.patch), metav1.PatchOptions{})
			if !apierrors.IsInvalid(err) && !apierrors.IsForbidden(err) {
				t.Fatalf("patch %s: %v, want 422 or 403", tt.patch, err)
			}
			if !strings.Contains(err.Error(), tt.message) {
				t.Errorf("error %q does not say %q", err, tt.message)
			}
		})
	}
	// A change to a mutable field goes through.
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if _, err := c.Dynamic().Resource(triggers).Namespace(ns).Patch(ctx, "order-created", types.MergePatchType,
		[]byte(`{"spec":{"filter":{"attributes":{"type":"com.example.order.updated"}}}}`), metav1.PatchOptions{}); err != nil {
		t.Errorf("changing a Trigger's filter: %v", err)
	}
}

// TestRuntimeRBAC acts as the runtime's ServiceAccount and checks that it
// may read the four kinds and patch their status, and nothing more.
func TestRuntimeRBAC(t *testing.T) {
	c := newCluster(t)
	objs, mapping := applyExample(t, c, "quickstart")
	ns := mapping["quickstart"]
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	aggregate(t, ctx, c, objs)

	cfg, err := c.env.ServiceAccountConfig(ctx, ns, plugins.RuntimeName)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	type check struct {
		verb, group, resource, subresource string
	}
	tests := []struct {
		check
		allowed bool
	}{
		{check{"list", "eventing.knative.dev", "brokers", ""}, true},
		{check{"watch", "eventing.knative.dev", "triggers", ""}, true},
		{check{"get", "messaging.knative.dev", "channels", ""}, true},
		{check{"list", "messaging.knative.dev", "subscriptions", ""}, true},
		{check{"update", "eventing.knative.dev", "brokers", "status"}, false},
		{check{"patch", "eventing.knative.dev", "triggers", "status"}, true},
		{check{"update", "messaging.knative.dev", "channels", "status"}, false},
		{check{"patch", "eventing.knative.dev", "brokers", "status"}, true},
		{check{"patch", "messaging.knative.dev", "subscriptions", "status"}, true},
		{check{"get", "", "services", ""}, true},
		{check{"update", "eventing.knative.dev", "brokers", ""}, false},
		{check{"patch", "eventing.knative.dev", "triggers", ""}, false},
		{check{"delete", "messaging.knative.dev", "channels", ""}, false},
		{check{"create", "messaging.knative.dev", "subscriptions", ""}, false},
		{check{"get", "", "secrets", ""}, false},
		{check{"update", "", "configmaps", ""}, false},
	}
	var got, want []string
	for _, tt := range tests {
		review, err := cs.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{
			Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &authorizationv1.ResourceAttributes{
				Namespace: ns, Verb: tt.verb, Group: tt.group, Resource: tt.resource, Subresource: tt.subresource,
			}},
		}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		line := fmt.Sprintf("%s %s/%s %s", tt.verb, tt.group, tt.resource, tt.subresource)
		got = append(got, fmt.Sprintf("%s: %v", line, review.Status.Allowed))
		want = append(want, fmt.Sprintf("%s: %v", line, tt.allowed))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("permissions (-want +got):\n%s", diff)
	}
	// And for real: a status write goes through, a spec write does not.
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r := dyn.Resource(brokers).Namespace(ns)
	b, err := r.Get(ctx, "default", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedSlice(b.Object, []any{map[string]any{"type": "Ready", "status": "Unknown"}}, "status", "conditions")
	// The runtime patches status (knc-runtime's Role has patch, not update).
	statusPatch := []byte(`{"status":{"conditions":[{"type":"Ready","status":"Unknown"}]}}`)
	if _, err := r.Patch(ctx, "default", types.MergePatchType, statusPatch, metav1.PatchOptions{}, "status"); err != nil {
		t.Errorf("the runtime cannot write a Broker's status: %v", err)
	}
	if _, err := r.Update(ctx, b, metav1.UpdateOptions{}); !apierrors.IsForbidden(err) {
		t.Errorf("the runtime's spec write: %v, want 403", err)
	}
}

// aggregate does what the controller manager's ClusterRole aggregation
// does in a cluster (no controllers run here), and checks that each
// aggregated ClusterRole of objs got rules from the ClusterRoles its
// selectors match.
func aggregate(t *testing.T, ctx context.Context, c *cluster, objs []*unstructured.Unstructured) {
	t.Helper()
	aggregated, err := c.env.AggregateClusterRoles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, role := range aggregated {
		ours := slices.ContainsFunc(objs, func(o *unstructured.Unstructured) bool {
			return o.GetKind() == "ClusterRole" && o.GetName() == role.Name
		})
		if ours && len(role.Rules) == 0 {
			t.Fatalf("ClusterRole %s aggregates nothing", role.Name)
		}
	}
}
