package restmap_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/internal/restmap"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

func newMapper(t *testing.T, cfg *rest.Config) *restmap.Mapper {
	t.Helper()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m, err := restmap.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// mapping is what the runtime reads of a RESTMapping.
type mapping struct {
	Resource schema.GroupVersionResource
	Kind     schema.GroupVersionKind
	Scope    meta.RESTScopeName
	NoMatch  bool
}

func summary(m *meta.RESTMapping, err error) (mapping, error) {
	if meta.IsNoMatchError(err) {
		return mapping{NoMatch: true}, nil
	}
	if err != nil {
		return mapping{}, err
	}
	return mapping{Resource: m.Resource, Kind: m.GroupVersionKind, Scope: m.Scope.Name()}, nil
}

// TestMapsAsClientGoRESTMapper checks the mapper against client-go's
// discovery REST mapper, which the runtime used before: built-in kinds
// of the core and named groups, namespaced and cluster-scoped, a kind a
// served group does not have, a version and a group the API server does
// not serve.
func TestMapsAsClientGoRESTMapper(t *testing.T) {
	env := kubetest.Current(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	dc, err := discovery.NewDiscoveryClientForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	reference := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc))
	mapper := newMapper(t, env.Config())
	for _, gvk := range []schema.GroupVersionKind{
		{Version: "v1", Kind: "Service"},
		{Version: "v1", Kind: "Namespace"},
		{Version: "v1", Kind: "ConfigMap"},
		{Group: "apps", Version: "v1", Kind: "Deployment"},
		{Group: "rbac.authorization.k8s.io", Version: "v1", Kind: "ClusterRole"},
		{Group: "apiextensions.k8s.io", Version: "v1", Kind: "CustomResourceDefinition"},
		{Version: "v1", Kind: "Nothing"},
		{Version: "v2", Kind: "Service"},
		{Group: "apps", Version: "v1beta9", Kind: "Deployment"},
		{Group: "eventing.knative.dev", Version: "v1", Kind: "Broker"},
	} {
		want, err := summary(reference.RESTMapping(gvk.GroupKind(), gvk.Version))
		if err != nil {
			t.Fatalf("client-go's mapper, %s: %v", gvk, err)
		}
		got, err := summary(mapper.RESTMapping(ctx, gvk.GroupKind(), gvk.Version))
		if err != nil {
			t.Fatalf("%s: %v", gvk, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-client-go +restmap):\n%s", gvk, diff)
		}
	}
}

// TestFindsAKindInstalledLater checks that a miss asks the API server
// again: a referent's CRD installed after the runtime first looked for
// it is found without a restart.
func TestFindsAKindInstalledLater(t *testing.T) {
	env := kubetest.Current(t)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	mapper := newMapper(t, env.Config())
	gk := schema.GroupKind{Group: fmt.Sprintf("r%d.restmap.test.knc.dev", time.Now().UnixNano()), Kind: "Thing"}
	if _, err := mapper.RESTMapping(ctx, gk, "v1"); !meta.IsNoMatchError(err) {
		t.Fatalf("before the CRD: got %v, want a no-match error", err)
	}
	if err := env.InstallCRDYAML(ctx, kubetest.SchemalessCRD(gk.Group, "Thing", "things")); err != nil {
		t.Fatal(err)
	}
	got, err := summary(mapper.RESTMapping(ctx, gk, "v1"))
	if err != nil {
		t.Fatal(err)
	}
	want := mapping{
		Resource: schema.GroupVersionResource{Group: gk.Group, Version: "v1", Resource: "things"},
		Kind:     gk.WithVersion("v1"),
		Scope:    meta.RESTScopeNameNamespace,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the CRD (-want +got):\n%s", diff)
	}
	// Another kind of a group version already read is looked up again.
	if _, err := mapper.RESTMapping(ctx, schema.GroupKind{Group: gk.Group, Kind: "Other"}, "v1"); !meta.IsNoMatchError(err) {
		t.Errorf("a kind the group does not serve: got %v, want a no-match error", err)
	}
}
