package kubetest_test

import (
	"context"
	"errors"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	authenticationv1 "k8s.io/api/authentication/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/knc-dev/knc/internal/kubetest"
)

func TestMain(m *testing.M) {
	os.Exit(kubetest.Main(m, kubetest.WithCRDPaths("testdata/widgets.yaml")))
}

var widgetsGVR = schema.GroupVersionResource{Group: "kubetest.knc.dev", Version: "v1alpha1", Resource: "widgets"}

func ctxFor(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dynamicFor(t *testing.T, cfg *rest.Config) dynamic.Interface {
	t.Helper()
	c, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func widget(name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kubetest.knc.dev/v1alpha1",
		"kind":       "Widget",
		"metadata":   map[string]any{"name": name},
		"spec":       spec,
	}}
}

// specStatus is the part of an object the subresource rules are about.
func specStatus(u *unstructured.Unstructured) map[string]any {
	out := map[string]any{}
	for _, k := range []string{"spec", "status"} {
		if v, ok := u.Object[k]; ok {
			out[k] = v
		}
	}
	return out
}

// statusCode is the HTTP status of an API error, or 0 for nil.
func statusCode(err error) int32 {
	if err == nil {
		return 0
	}
	var s apierrors.APIStatus
	if errors.As(err, &s) {
		return s.Status().Code
	}
	return -1
}

func TestControlPlane(t *testing.T) {
	env := kubetest.Current(t)
	t.Logf("etcd and kube-apiserver from %s ready in %v", env.AssetsDir(), env.StartDuration())

	v, err := env.Clientset().Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if got, want := v.GitVersion, "v1.37.1"; got != want {
		t.Errorf("server gitVersion = %q, want %q (hack/testbin/build.sh sets it)", got, want)
	}

	// RBAC is on: an account granted nothing is refused.
	ns := env.Namespace(t)
	cs, err := kubernetes.NewForConfig(env.ServiceAccount(t, ns, "nobody"))
	if err != nil {
		t.Fatal(err)
	}
	_, err = cs.CoreV1().ConfigMaps(ns).List(ctxFor(t), metav1.ListOptions{})
	if got := statusCode(err); got != http.StatusForbidden {
		t.Errorf("listing ConfigMaps with no grants: status %d (%v), want 403", got, err)
	}
}

func TestCRDServedWithStatusSubresource(t *testing.T) {
	env := kubetest.Current(t)
	resources, err := env.Clientset().Discovery().ServerResourcesForGroupVersion(widgetsGVR.GroupVersion().String())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, r := range resources.APIResources {
		got[r.Name] = r.Verbs
	}
	want := map[string][]string{
		"widgets":        {"delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"},
		"widgets/status": {"get", "patch", "update"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("served resources (-want +got):\n%s", diff)
	}
}

func TestStatusSubresourceSeparatesSpecAndStatus(t *testing.T) {
	env := kubetest.Current(t)
	ns := env.Namespace(t)
	widgets := dynamicFor(t, env.Config()).Resource(widgetsGVR).Namespace(ns)

	tests := []struct {
		name string
		// status sends the write to /status instead of the main endpoint;
		// either way it changes both spec and status.
		status bool
		want   map[string]any
	}{
		{
			name: "main endpoint ignores status",
			want: map[string]any{
				"spec":   map[string]any{"size": int64(2)},
				"status": map[string]any{"phase": "Ready"},
			},
		},
		{
			name:   "status endpoint ignores spec",
			status: true,
			want: map[string]any{
				"spec":   map[string]any{"size": int64(1)},
				"status": map[string]any{"phase": "Changed"},
			},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxFor(t)
			name := "w" + string(rune('a'+i))
			obj, err := widgets.Create(ctx, widget(name, map[string]any{"size": int64(1)}), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if err := unstructured.SetNestedField(obj.Object, "Ready", "status", "phase"); err != nil {
				t.Fatal(err)
			}
			if obj, err = widgets.UpdateStatus(ctx, obj, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}

			_ = unstructured.SetNestedField(obj.Object, int64(2), "spec", "size")
			_ = unstructured.SetNestedField(obj.Object, "Changed", "status", "phase")
			if tt.status {
				_, err = widgets.UpdateStatus(ctx, obj, metav1.UpdateOptions{})
			} else {
				_, err = widgets.Update(ctx, obj, metav1.UpdateOptions{})
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := widgets.Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, specStatus(got)); diff != "" {
				t.Errorf("stored object (-want +got):\n%s", diff)
			}
		})
	}
}

func TestGenerationFollowsSpecOnly(t *testing.T) {
	env := kubetest.Current(t)
	ns := env.Namespace(t)
	widgets := dynamicFor(t, env.Config()).Resource(widgetsGVR).Namespace(ns)
	ctx := ctxFor(t)

	obj, err := widgets.Create(ctx, widget("w", map[string]any{"size": int64(1)}), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := obj.GetGeneration(); got != 1 {
		t.Fatalf("generation after create = %d, want 1", got)
	}

	// The steps run in order on one object; each says what the generation
	// must be afterwards and whether resourceVersion must have moved.
	steps := []struct {
		name           string
		write          func(*unstructured.Unstructured) (*unstructured.Unstructured, error)
		wantGeneration int64
		wantNewRV      bool
	}{
		{
			name: "spec change",
			write: func(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				_ = unstructured.SetNestedField(o.Object, int64(2), "spec", "size")
				return widgets.Update(ctx, o, metav1.UpdateOptions{})
			},
			wantGeneration: 2,
			wantNewRV:      true,
		},
		{
			name: "status change",
			write: func(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				_ = unstructured.SetNestedField(o.Object, "Ready", "status", "phase")
				return widgets.UpdateStatus(ctx, o, metav1.UpdateOptions{})
			},
			wantGeneration: 2,
			wantNewRV:      true,
		},
		{
			name: "label change",
			write: func(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				o.SetLabels(map[string]string{"team": "a"})
				return widgets.Update(ctx, o, metav1.UpdateOptions{})
			},
			wantGeneration: 2,
			wantNewRV:      true,
		},
		{
			name: "annotation merge patch",
			write: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return widgets.Patch(ctx, "w", types.MergePatchType, []byte(`{"metadata":{"annotations":{"note":"x"}}}`), metav1.PatchOptions{})
			},
			wantGeneration: 2,
			wantNewRV:      true,
		},
		{
			name: "unchanged update",
			write: func(o *unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return widgets.Update(ctx, o, metav1.UpdateOptions{})
			},
			wantGeneration: 2,
			wantNewRV:      false,
		},
		{
			name: "spec merge patch",
			write: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return widgets.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"color":"red"}}`), metav1.PatchOptions{})
			},
			wantGeneration: 3,
			wantNewRV:      true,
		},
		{
			name: "status merge patch",
			write: func(*unstructured.Unstructured) (*unstructured.Unstructured, error) {
				return widgets.Patch(ctx, "w", types.MergePatchType, []byte(`{"status":{"observedGeneration":3}}`), metav1.PatchOptions{}, "status")
			},
			wantGeneration: 3,
			wantNewRV:      true,
		},
	}
	for _, step := range steps {
		before := obj.GetResourceVersion()
		got, err := step.write(obj.DeepCopy())
		if err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		if g := got.GetGeneration(); g != step.wantGeneration {
			t.Errorf("%s: generation = %d, want %d", step.name, g, step.wantGeneration)
		}
		if moved := got.GetResourceVersion() != before; moved != step.wantNewRV {
			t.Errorf("%s: resourceVersion %s -> %s, want changed=%v", step.name, before, got.GetResourceVersion(), step.wantNewRV)
		}
		obj = got
	}
}

func TestStaleResourceVersionConflicts(t *testing.T) {
	env := kubetest.Current(t)
	ns := env.Namespace(t)
	widgets := dynamicFor(t, env.Config()).Resource(widgetsGVR).Namespace(ns)

	tests := []struct {
		name  string
		write func(context.Context, *unstructured.Unstructured) error
	}{
		{"update", func(ctx context.Context, o *unstructured.Unstructured) error {
			_ = unstructured.SetNestedField(o.Object, int64(7), "spec", "size")
			_, err := widgets.Update(ctx, o, metav1.UpdateOptions{})
			return err
		}},
		{"update status", func(ctx context.Context, o *unstructured.Unstructured) error {
			_ = unstructured.SetNestedField(o.Object, "Stale", "status", "phase")
			_, err := widgets.UpdateStatus(ctx, o, metav1.UpdateOptions{})
			return err
		}},
		{"patch with resourceVersion precondition", func(ctx context.Context, o *unstructured.Unstructured) error {
			patch := `{"metadata":{"resourceVersion":"` + o.GetResourceVersion() + `"},"spec":{"size":8}}`
			_, err := widgets.Patch(ctx, o.GetName(), types.MergePatchType, []byte(patch), metav1.PatchOptions{})
			return err
		}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxFor(t)
			name := "w" + string(rune('a'+i))
			stale, err := widgets.Create(ctx, widget(name, map[string]any{"size": int64(1)}), metav1.CreateOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// Someone else writes first; stale still carries the old version.
			fresh := stale.DeepCopy()
			fresh.SetLabels(map[string]string{"writer": "other"})
			if _, err := widgets.Update(ctx, fresh, metav1.UpdateOptions{}); err != nil {
				t.Fatal(err)
			}
			err = tt.write(ctx, stale.DeepCopy())
			if got := statusCode(err); got != http.StatusConflict {
				t.Errorf("write with stale resourceVersion: status %d (%v), want 409", got, err)
			}
		})
	}
}

func TestServiceAccountLimitedToStatus(t *testing.T) {
	env := kubetest.Current(t)
	ns := env.Namespace(t)
	ctx := ctxFor(t)
	admin := dynamicFor(t, env.Config()).Resource(widgetsGVR).Namespace(ns)
	if _, err := admin.Create(ctx, widget("w", map[string]any{"size": int64(1)}), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}

	const sa = "status-writer"
	cfg := env.ServiceAccount(t, ns, sa,
		rbacv1.PolicyRule{APIGroups: []string{widgetsGVR.Group}, Resources: []string{"widgets"}, Verbs: []string{"get"}},
		rbacv1.PolicyRule{APIGroups: []string{widgetsGVR.Group}, Resources: []string{"widgets/status"}, Verbs: []string{"get", "update", "patch"}},
	)
	if cfg.CertData != nil || cfg.KeyData != nil || cfg.CertFile != "" || cfg.Impersonate.UserName != "" || cfg.BearerToken == "" {
		t.Fatalf("ServiceAccount config carries credentials other than a bearer token")
	}

	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:"+ns+":"+sa; got != want {
		t.Fatalf("authenticated as %q, want %q", got, want)
	}

	widgets := dynamicFor(t, cfg).Resource(widgetsGVR).Namespace(ns)
	tests := []struct {
		name string
		do   func(context.Context) error
		want int32
	}{
		{"get", func(ctx context.Context) error {
			_, err := widgets.Get(ctx, "w", metav1.GetOptions{})
			return err
		}, 0},
		{"list", func(ctx context.Context) error {
			_, err := widgets.List(ctx, metav1.ListOptions{})
			return err
		}, http.StatusForbidden},
		{"update spec", func(ctx context.Context) error {
			o, err := widgets.Get(ctx, "w", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_ = unstructured.SetNestedField(o.Object, int64(99), "spec", "size")
			_, err = widgets.Update(ctx, o, metav1.UpdateOptions{})
			return err
		}, http.StatusForbidden},
		{"patch spec", func(ctx context.Context) error {
			_, err := widgets.Patch(ctx, "w", types.MergePatchType, []byte(`{"spec":{"size":98}}`), metav1.PatchOptions{})
			return err
		}, http.StatusForbidden},
		{"create", func(ctx context.Context) error {
			_, err := widgets.Create(ctx, widget("other", nil), metav1.CreateOptions{})
			return err
		}, http.StatusForbidden},
		{"update status", func(ctx context.Context) error {
			o, err := widgets.Get(ctx, "w", metav1.GetOptions{})
			if err != nil {
				return err
			}
			_ = unstructured.SetNestedField(o.Object, "Ready", "status", "phase")
			_, err = widgets.UpdateStatus(ctx, o, metav1.UpdateOptions{})
			return err
		}, 0},
		{"patch status", func(ctx context.Context) error {
			_, err := widgets.Patch(ctx, "w", types.MergePatchType, []byte(`{"status":{"observedGeneration":1}}`), metav1.PatchOptions{}, "status")
			return err
		}, 0},
	}
	for _, tt := range tests {
		err := tt.do(ctx)
		if got := statusCode(err); got != tt.want {
			t.Errorf("%s: status %d (%v), want %d", tt.name, got, err, tt.want)
		}
	}

	got, err := admin.Get(ctx, "w", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"spec":   map[string]any{"size": int64(1)},
		"status": map[string]any{"phase": "Ready", "observedGeneration": int64(1)},
	}
	if diff := cmp.Diff(want, specStatus(got)); diff != "" {
		t.Errorf("object after the ServiceAccount's writes (-want +got):\n%s", diff)
	}
}

// Without a status subresource the API server keeps no such split: the
// main endpoint stores status and bumps the generation for it. This keeps
// the tests above honest about what the subresource changes.
func TestWithoutStatusSubresourceStatusIsSpecLike(t *testing.T) {
	env := kubetest.Current(t)
	ctx := ctxFor(t)
	err := env.InstallCRDYAML(ctx, []byte(`
# a comment-only document is skipped
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.kubetest.knc.dev
spec:
  group: kubetest.knc.dev
  scope: Namespaced
  names: {kind: Gadget, listKind: GadgetList, plural: gadgets, singular: gadget}
  versions:
  - name: v1alpha1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`))
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	gadgets := dynamicFor(t, env.Config()).Resource(widgetsGVR.GroupVersion().WithResource("gadgets")).Namespace(ns)
	obj := widget("g", map[string]any{"size": int64(1)})
	obj.SetKind("Gadget")
	obj, err = gadgets.Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = unstructured.SetNestedField(obj.Object, "Ready", "status", "phase")
	got, err := gadgets.Update(ctx, obj, metav1.UpdateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]any{"phase": "Ready"}, got.Object["status"]); diff != "" {
		t.Errorf("status through the main endpoint (-want +got):\n%s", diff)
	}
	if g := got.GetGeneration(); g != 2 {
		t.Errorf("generation after a status-only change = %d, want 2", g)
	}
}

func TestKubeConfigCarriesServiceAccountToken(t *testing.T) {
	env := kubetest.Current(t)
	ns := env.Namespace(t)
	data, err := kubetest.KubeConfig(env.ServiceAccount(t, ns, "cli"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	review, err := cs.AuthenticationV1().SelfSubjectReviews().Create(ctxFor(t), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := review.Status.UserInfo.Username, "system:serviceaccount:"+ns+":cli"; got != want {
		t.Errorf("kubeconfig authenticates as %q, want %q", got, want)
	}
}

func TestNamespacesAreUniqueAndAnnotated(t *testing.T) {
	env := kubetest.Current(t)
	a, b := env.Namespace(t), env.Namespace(t)
	if a == b {
		t.Fatalf("two calls returned the same namespace %q", a)
	}
	ns, err := env.Clientset().CoreV1().Namespaces().Get(ctxFor(t), a, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := ns.Annotations[kubetest.TestAnnotation]; got != t.Name() {
		t.Errorf("annotation %s = %q, want %q", kubetest.TestAnnotation, got, t.Name())
	}
}

func TestMissingBinariesNameTheFix(t *testing.T) {
	_, err := kubetest.Start(kubetest.WithAssetsDir(t.TempDir()))
	if !errors.Is(err, kubetest.ErrBinariesMissing) {
		t.Fatalf("Start with an empty assets dir: %v, want ErrBinariesMissing", err)
	}
	if !strings.Contains(err.Error(), "make testbin") {
		t.Errorf("error %q does not say to run make testbin", err)
	}
}

func TestDecodeCRDs(t *testing.T) {
	tests := []struct {
		name      string
		yaml      string
		wantNames []string
		wantErr   string
	}{
		{
			name:      "two documents and an empty one",
			yaml:      "---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.x.io}\n---\n---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: b.x.io}\n",
			wantNames: []string{"a.x.io", "b.x.io"},
		},
		{
			name:    "other kind",
			yaml:    "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n",
			wantErr: "decoding document 0",
		},
		{
			name:    "unknown field",
			yaml:    "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: a.x.io}\nspec: {grup: x.io}\n",
			wantErr: "grup",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			crds, err := kubetest.DecodeCRDs([]byte(tt.yaml))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, c := range crds {
				names = append(names, c.Name)
			}
			if diff := cmp.Diff(tt.wantNames, names); diff != "" {
				t.Errorf("names (-want +got):\n%s", diff)
			}
		})
	}
}
