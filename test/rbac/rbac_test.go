package rbac

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/plugins"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

var resources = map[string]schema.GroupVersionResource{
	"Broker":       {Group: "eventing.knative.dev", Version: "v1", Resource: "brokers"},
	"Trigger":      {Group: "eventing.knative.dev", Version: "v1", Resource: "triggers"},
	"Channel":      {Group: "messaging.knative.dev", Version: "v1", Resource: "channels"},
	"Subscription": {Group: "messaging.knative.dev", Version: "v1", Resource: "subscriptions"},
}

// build renders the quickstart with runtime settings r and returns its
// output directory and objects.
func build(t *testing.T, r *project.Runtime) (string, []*unstructured.Unstructured) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", "quickstart"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("the quickstart is invalid:\n%v", res.Diagnostics)
	}
	if r != nil {
		res.Config.Runtime = r
	}
	out, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends})
	if err != nil || len(diags) > 0 {
		t.Fatalf("the quickstart does not build: %v %v", err, diags)
	}
	outDir := filepath.Join(t.TempDir(), "out")
	if err := out.Write(outDir); err != nil {
		t.Fatal(err)
	}
	var stream bytes.Buffer
	if err := out.Stream(&stream); err != nil {
		t.Fatal(err)
	}
	dec := utilyaml.NewYAMLOrJSONDecoder(&stream, 4096)
	var objs []*unstructured.Unstructured
	for {
		var o map[string]any
		if err := dec.Decode(&o); err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			t.Fatal(err)
		}
		if o != nil {
			objs = append(objs, &unstructured.Unstructured{Object: o})
		}
	}
	return outDir, objs
}

// runtimeRules are the rules the build grants the runtime in a namespace
// it serves: its Role, and the ClusterRole parts aggregated into the
// addressable resolver it is bound to (aggregation is the controller
// manager's job, and none runs here).
func runtimeRules(t *testing.T, objs []*unstructured.Unstructured) []rbacv1.PolicyRule {
	t.Helper()
	var rules []rbacv1.PolicyRule
	roleSeen := false
	for _, o := range objs {
		var src []rbacv1.PolicyRule
		switch {
		case o.GetKind() == "Role" && o.GetName() == plugins.RuntimeRole:
			if roleSeen {
				// One Role per namespace served, all alike.
				continue
			}
			roleSeen = true
			var r rbacv1.Role
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			src = r.Rules
		case o.GetKind() == "ClusterRole" && o.GetName() == plugins.AddressableKinds:
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			src = r.Rules
		case o.GetKind() == "ClusterRole" && o.GetName() == plugins.AddressableResolver:
			var r rbacv1.ClusterRole
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(o.Object, &r); err != nil {
				t.Fatal(err)
			}
			if len(r.Rules) > 0 {
				t.Errorf("the aggregated ClusterRole holds rules of its own: %v", r.Rules)
			}
		}
		rules = append(rules, src...)
	}
	if !roleSeen {
		t.Fatal("no runtime Role in the build output")
	}
	return rules
}

// specObjects are the quickstart's Brokers, Triggers, Channels and
// Subscriptions, moved to namespace ns.
func specObjects(objs []*unstructured.Unstructured, ns string) []*unstructured.Unstructured {
	var out []*unstructured.Unstructured
	for _, o := range objs {
		if _, ok := resources[o.GetKind()]; ok {
			c := o.DeepCopy()
			c.SetNamespace(ns)
			out = append(out, c)
		}
	}
	return out
}

// attempt records whether a request was allowed: "ok", "forbidden", or the
// error.
func attempt(err error) string {
	switch {
	case err == nil:
		return "ok"
	case apierrors.IsForbidden(err):
		return "forbidden"
	default:
		return err.Error()
	}
}

func TestRuntimeRBACCannotWriteSpecs(t *testing.T) {
	three := int64(3)
	forms := []struct {
		name    string
		runtime *project.Runtime
	}{
		{"deployment", nil},
		{"statefulset", &project.Runtime{Replicas: &three}},
		{"external NATS", &project.Runtime{Replicas: &three, NATS: &project.NATSRuntime{URL: "nats://nats:4222", CredentialsSecret: "nats"}}},
	}
	env := kubetest.Current(t)
	outDir, _ := build(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := env.InstallCRDPaths(ctx, filepath.Join(outDir, render.CRDDir)); err != nil {
		t.Fatal(err)
	}
	for _, form := range forms {
		t.Run(form.name, func(t *testing.T) {
			_, objs := build(t, form.runtime)
			ns := env.Namespace(t)
			admin, err := dynamic.NewForConfig(env.Config())
			if err != nil {
				t.Fatal(err)
			}
			targets := specObjects(objs, ns)
			for _, o := range targets {
				gvr := resources[o.GetKind()]
				if _, err := admin.Resource(gvr).Namespace(ns).Create(ctx, o, metav1.CreateOptions{}); err != nil {
					t.Fatalf("creating %s %s: %v", o.GetKind(), o.GetName(), err)
				}
			}
			cfg := env.ServiceAccount(t, ns, plugins.RuntimeName, runtimeRules(t, objs)...)
			as, err := dynamic.NewForConfig(cfg)
			if err != nil {
				t.Fatal(err)
			}
			checkSpecsAreReadOnly(t, ctx, admin, as, ns, targets)
			checkNothingElse(t, ctx, cfg, ns)
		})
	}
}

func checkSpecsAreReadOnly(t *testing.T, ctx context.Context, admin, as dynamic.Interface, ns string, targets []*unstructured.Unstructured) {
	t.Helper()
	var got, want []string
	expect := func(what, outcome, wanted string) {
		got = append(got, what+": "+outcome)
		want = append(want, what+": "+wanted)
	}
	for _, o := range targets {
		gvr := resources[o.GetKind()]
		r := as.Resource(gvr).Namespace(ns)
		name := o.GetName()
		what := func(verb string) string { return fmt.Sprintf("%s %s %s", verb, o.GetKind(), name) }

		live, err := r.Get(ctx, name, metav1.GetOptions{})
		expect(what("get"), attempt(err), "ok")
		_, err = r.List(ctx, metav1.ListOptions{})
		expect(what("list"), attempt(err), "ok")
		if live == nil {
			continue
		}
		changed := live.DeepCopy()
		_ = unstructured.SetNestedField(changed.Object, "changed", "metadata", "labels", "knc-test")
		_ = unstructured.SetNestedField(changed.Object, map[string]any{"retry": int64(99)}, "spec", "delivery")
		_, err = r.Update(ctx, changed, metav1.UpdateOptions{})
		expect(what("update"), attempt(err), "forbidden")
		_, err = r.Patch(ctx, name, types.MergePatchType, []byte(`{"spec":{"delivery":{"retry":99}}}`), metav1.PatchOptions{})
		expect(what("merge-patch spec of"), attempt(err), "forbidden")
		_, err = r.Patch(ctx, name, types.JSONPatchType, []byte(`[{"op":"add","path":"/metadata/labels","value":{"a":"b"}}]`), metav1.PatchOptions{})
		expect(what("json-patch metadata of"), attempt(err), "forbidden")
		apply := []byte(fmt.Sprintf(`{"apiVersion":%q,"kind":%q,"metadata":{"name":%q},"spec":{"delivery":{"retry":99}}}`, o.GetAPIVersion(), o.GetKind(), name))
		_, err = r.Patch(ctx, name, types.ApplyPatchType, apply, metav1.PatchOptions{FieldManager: "knc-runtime"})
		expect(what("apply spec of"), attempt(err), "forbidden")
		err = r.Delete(ctx, name, metav1.DeleteOptions{})
		expect(what("delete"), attempt(err), "forbidden")
		err = r.DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
		expect(what("delete all like"), attempt(err), "forbidden")
		copied := o.DeepCopy()
		copied.SetName(name + "-copy")
		_, err = r.Create(ctx, copied, metav1.CreateOptions{})
		expect(what("create a copy of"), attempt(err), "forbidden")
		_, err = r.UpdateStatus(ctx, live, metav1.UpdateOptions{})
		expect(what("update status of"), attempt(err), "forbidden")

		// A status patch is allowed, and cannot carry a spec change: the
		// status subresource ignores everything but status.
		before, err := admin.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		smuggled := []byte(`{"spec":{"delivery":{"retry":99}},"metadata":{"labels":{"smuggled":"yes"}},"status":{"observedGeneration":1}}`)
		_, err = r.Patch(ctx, name, types.MergePatchType, smuggled, metav1.PatchOptions{}, "status")
		expect(what("patch status of"), attempt(err), "ok")
		after, err := admin.Resource(gvr).Namespace(ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		specBefore, _, _ := unstructured.NestedFieldCopy(before.Object, "spec")
		specAfter, _, _ := unstructured.NestedFieldCopy(after.Object, "spec")
		if diff := cmp.Diff(specBefore, specAfter); diff != "" {
			t.Errorf("%s: a status patch changed the spec (-before +after):\n%s", what("patch status of"), diff)
		}
		if after.GetLabels()["smuggled"] != "" {
			t.Errorf("%s: a status patch changed the labels", what("patch status of"))
		}
		if after.GetGeneration() != before.GetGeneration() {
			t.Errorf("%s: generation went from %d to %d", what("patch status of"), before.GetGeneration(), after.GetGeneration())
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the runtime's permissions (-want +got):\n%s", diff)
	}
}

// checkNothingElse checks that the runtime can neither touch the
// namespace's other objects nor grant itself more.
func checkNothingElse(t *testing.T, ctx context.Context, cfg *rest.Config, ns string) {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	meta := metav1.ObjectMeta{Name: "knc-test", Namespace: ns}
	tests := []struct {
		what string
		do   func() error
		want string
	}{
		{"get services", func() error { _, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{}); return err }, "ok"},
		{"create a service", func() error {
			_, err := cs.CoreV1().Services(ns).Create(ctx, &corev1.Service{ObjectMeta: meta, Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}}}, metav1.CreateOptions{})
			return err
		}, "forbidden"},
		{"list secrets", func() error { _, err := cs.CoreV1().Secrets(ns).List(ctx, metav1.ListOptions{}); return err }, "forbidden"},
		{"create a config map", func() error {
			_, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: meta}, metav1.CreateOptions{})
			return err
		}, "forbidden"},
		{"list pods", func() error { _, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{}); return err }, "forbidden"},
		{"list deployments", func() error { _, err := cs.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); return err }, "forbidden"},
		{"create a role", func() error {
			_, err := cs.RbacV1().Roles(ns).Create(ctx, &rbacv1.Role{ObjectMeta: meta}, metav1.CreateOptions{})
			return err
		}, "forbidden"},
		{"bind a cluster role", func() error {
			_, err := cs.RbacV1().RoleBindings(ns).Create(ctx, &rbacv1.RoleBinding{
				ObjectMeta: meta,
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "cluster-admin"},
				Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: plugins.RuntimeName, Namespace: ns}},
			}, metav1.CreateOptions{})
			return err
		}, "forbidden"},
		{"list namespaces", func() error { _, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{}); return err }, "forbidden"},
	}
	var got, want []string
	for _, tt := range tests {
		got = append(got, tt.what+": "+attempt(tt.do()))
		want = append(want, tt.what+": "+tt.want)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the runtime's other permissions (-want +got):\n%s", diff)
	}
}
