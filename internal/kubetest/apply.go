package kubetest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// Applier applies objects of any kind to the API server as GitOps tools
// do: by server-side apply through the dynamic client, each object's
// resource found through discovery.
type Applier struct {
	cfg     *rest.Config
	dynamic dynamic.Interface
	mapper  *restmapper.DeferredDiscoveryRESTMapper
}

// NewApplier returns an Applier that acts with cfg's credentials.
func NewApplier(cfg *rest.Config) (*Applier, error) {
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubetest: dynamic client: %w", err)
	}
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("kubetest: discovery client: %w", err)
	}
	return &Applier{
		cfg:     rest.CopyConfig(cfg),
		dynamic: dyn,
		mapper:  restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(dc)),
	}, nil
}

// Applier returns an Applier with admin rights. It fails t on error.
func (e *Env) Applier(t testing.TB) *Applier {
	t.Helper()
	a, err := NewApplier(e.admin)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// Dynamic is the Applier's dynamic client.
func (a *Applier) Dynamic() dynamic.Interface {
	return a.dynamic
}

// Resource returns the client of o's resource, in o's namespace when the
// resource is namespaced.
func (a *Applier) Resource(o *unstructured.Unstructured) (dynamic.ResourceInterface, error) {
	gvk := o.GroupVersionKind()
	m, err := a.mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, fmt.Errorf("kubetest: the resource of %s: %w", gvk, err)
	}
	if m.Scope.Name() == meta.RESTScopeNameNamespace {
		return a.dynamic.Resource(m.Resource).Namespace(o.GetNamespace()), nil
	}
	return a.dynamic.Resource(m.Resource), nil
}

// ResetDiscovery forgets the resources discovered so far. Apply does it
// after the CRDs it applies; a test that installs CRDs another way calls
// it before applying their kinds.
func (a *Applier) ResetDiscovery() {
	a.mapper.Reset()
}

// ApplyOptions says how Apply applies.
type ApplyOptions struct {
	// FieldManager names the applier in the objects' managedFields. The API
	// server requires one for server-side apply.
	FieldManager string
	// DryRunFirst sends each group of objects as a server-side dry run
	// before applying it, so that a group one object of which the API
	// server refuses changes nothing.
	DryRunFirst bool
}

// Apply server-side applies objs, taking ownership of conflicting fields
// as GitOps tools do, in three groups: the CustomResourceDefinitions, then
// the Namespaces, then the rest, each in the order given. Between the first
// two it waits until every CRD is Established and rediscovers the
// resources, so that objects of the new kinds can be applied. Every object
// of a group is tried even when another fails; a group with errors ends
// the apply, and the errors are joined. ctx bounds the whole apply, the
// wait for the CRDs included.
func (a *Applier) Apply(ctx context.Context, objs []*unstructured.Unstructured, opts ApplyOptions) error {
	crds, namespaces, rest := applyGroups(objs)
	if err := a.applyGroup(ctx, crds, opts); err != nil {
		return err
	}
	if len(crds) > 0 {
		names := make([]string, len(crds))
		for i, crd := range crds {
			names[i] = crd.GetName()
		}
		if err := waitEstablished(ctx, a.cfg, names); err != nil {
			return err
		}
		if err := a.waitDiscovered(ctx, crds); err != nil {
			return err
		}
	}
	if err := a.applyGroup(ctx, namespaces, opts); err != nil {
		return err
	}
	return a.applyGroup(ctx, rest, opts)
}

// waitDiscovered rediscovers the resources until the kinds of crds map to
// resources: the API server serves a new kind in its discovery documents a
// little after the CRD is Established.
func (a *Applier) waitDiscovered(ctx context.Context, crds []*unstructured.Unstructured) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for {
		a.ResetDiscovery()
		var missing error
		for _, crd := range crds {
			group, _, _ := unstructured.NestedString(crd.Object, "spec", "group")
			kind, _, _ := unstructured.NestedString(crd.Object, "spec", "names", "kind")
			if _, err := a.mapper.RESTMapping(schema.GroupKind{Group: group, Kind: kind}); err != nil {
				missing = err
				break
			}
		}
		if missing == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("kubetest: waiting for new kinds to be discovered: %w", missing)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// applyGroups splits objs into the groups Apply applies one after the
// other, keeping their order within each.
func applyGroups(objs []*unstructured.Unstructured) (crds, namespaces, rest []*unstructured.Unstructured) {
	for _, o := range objs {
		switch o.GroupVersionKind().GroupKind().String() {
		case "CustomResourceDefinition.apiextensions.k8s.io":
			crds = append(crds, o)
		case "Namespace":
			namespaces = append(namespaces, o)
		default:
			rest = append(rest, o)
		}
	}
	return crds, namespaces, rest
}

func (a *Applier) applyGroup(ctx context.Context, group []*unstructured.Unstructured, opts ApplyOptions) error {
	if opts.DryRunFirst {
		if err := a.applyEach(ctx, group, opts.FieldManager, true); err != nil {
			return fmt.Errorf("kubetest: server-side dry run: %w", err)
		}
	}
	if err := a.applyEach(ctx, group, opts.FieldManager, false); err != nil {
		return fmt.Errorf("kubetest: server-side apply: %w", err)
	}
	return nil
}

func (a *Applier) applyEach(ctx context.Context, objs []*unstructured.Unstructured, fieldManager string, dryRun bool) error {
	var errs []error
	for _, o := range objs {
		r, err := a.Resource(o)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %s: %w", o.GetKind(), o.GetName(), err))
			continue
		}
		opts := metav1.ApplyOptions{FieldManager: fieldManager, Force: true}
		if dryRun {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		if _, err := r.Apply(ctx, o.GetName(), o, opts); err != nil {
			errs = append(errs, fmt.Errorf("%s %s/%s: %w", o.GetKind(), o.GetNamespace(), o.GetName(), err))
		}
	}
	return errors.Join(errs...)
}

// AggregateClusterRoles does once what the controller manager's ClusterRole
// aggregation controller does continuously, which the test control plane
// does not run: the rules of every ClusterRole with an aggregationRule
// become those of the other ClusterRoles its selectors match. It returns
// the aggregated ClusterRoles as updated.
func (e *Env) AggregateClusterRoles(ctx context.Context) ([]rbacv1.ClusterRole, error) {
	roles := e.clientset.RbacV1().ClusterRoles()
	list, err := roles.List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("kubetest: listing ClusterRoles: %w", err)
	}
	var aggregated []rbacv1.ClusterRole
	for _, agg := range list.Items {
		if agg.AggregationRule == nil {
			continue
		}
		var rules []rbacv1.PolicyRule
		for _, sel := range agg.AggregationRule.ClusterRoleSelectors {
			s, err := metav1.LabelSelectorAsSelector(&sel)
			if err != nil {
				return nil, fmt.Errorf("kubetest: ClusterRole %s: %w", agg.Name, err)
			}
			for _, part := range list.Items {
				if part.Name != agg.Name && s.Matches(labels.Set(part.Labels)) {
					rules = append(rules, part.Rules...)
				}
			}
		}
		agg.Rules = rules
		updated, err := roles.Update(ctx, &agg, metav1.UpdateOptions{})
		if err != nil {
			return nil, fmt.Errorf("kubetest: aggregating ClusterRole %s: %w", agg.Name, err)
		}
		aggregated = append(aggregated, *updated)
	}
	return aggregated, nil
}

// Kustomize builds the kustomization in dir with kustomize's default
// options, as Flux and Argo CD build what they apply, and returns its
// objects in kustomize's order.
func Kustomize(dir string) ([]*unstructured.Unstructured, error) {
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), dir)
	if err != nil {
		return nil, fmt.Errorf("kubetest: kustomize build %s: %w", dir, err)
	}
	var objs []*unstructured.Unstructured
	for _, r := range m.Resources() {
		obj, err := r.Map()
		if err != nil {
			return nil, fmt.Errorf("kubetest: kustomize build %s: %w", dir, err)
		}
		objs = append(objs, &unstructured.Unstructured{Object: obj})
	}
	return objs, nil
}
