package live

import (
	"context"
	"fmt"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// fluxKustomizations is the resource of Flux's Kustomization.
var fluxKustomizations = schema.GroupVersionResource{Group: "kustomize.toolkit.fluxcd.io", Version: "v1", Resource: "kustomizations"}

// objectKey identifies an object across versions.
type objectKey struct {
	group, kind, namespace, name string
}

func keyOf(u *unstructured.Unstructured) objectKey {
	return objectKey{groupOf(u.GetAPIVersion()), u.GetKind(), u.GetNamespace(), u.GetName()}
}

func outputKeys(objs []*unstructured.Unstructured) map[objectKey]bool {
	keys := map[objectKey]bool{}
	for _, o := range objs {
		keys[keyOf(o)] = true
	}
	return keys
}

// pruneByInventory reads the inventory of a Flux Kustomization, the
// objects its last apply made, and returns those that still exist and
// that the build no longer has: Flux's garbage collection deletes them
// (when the Kustomization prunes).
func pruneByInventory(ctx context.Context, c *Cluster, name string, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	ns, n, ok := strings.Cut(name, "/")
	if !ok || ns == "" || n == "" {
		return nil, fmt.Errorf("--kustomization %q: give NAMESPACE/NAME, such as flux-system/eventing", name)
	}
	ks, err := c.Dynamic.Resource(fluxKustomizations).Namespace(ns).Get(ctx, n, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading Flux Kustomization %s: %w", name, err)
	}
	entries, _, err := unstructured.NestedSlice(ks.Object, "status", "inventory", "entries")
	if err != nil {
		return nil, fmt.Errorf("the inventory of Flux Kustomization %s: status.inventory.entries: %w", name, err)
	}
	have := outputKeys(objs)
	var prune []*unstructured.Unstructured
	for _, e := range entries {
		m, _ := e.(map[string]any)
		id, _ := m["id"].(string)
		version, _ := m["v"].(string)
		obj, err := parseInventoryID(id)
		if err != nil {
			return nil, fmt.Errorf("the inventory of Flux Kustomization %s: status.inventory.entries: %w", name, err)
		}
		if have[obj] {
			continue
		}
		gvk := schema.GroupVersionKind{Group: obj.group, Version: version, Kind: obj.kind}
		ri, served, err := resourceFor(ctx, c, gvk, obj.namespace)
		if err != nil {
			return nil, err
		}
		if !served {
			continue
		}
		live, err := ri.Get(ctx, obj.name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading %s of the inventory of %s: %w", id, name, err)
		}
		prune = append(prune, live)
	}
	return prune, nil
}

// parseInventoryID reads the id of an entry of a Flux inventory:
// NAMESPACE_NAME_GROUP_KIND, with an empty namespace for a cluster-scoped
// object, an empty group for the core group, and each colon of the name
// (RBAC names have them) written as two underscores. Namespaces, groups and
// kinds have no underscore, so the namespace ends at the first one and the
// kind and group start after the last two.
func parseInventoryID(id string) (objectKey, error) {
	ns, rest, ok := strings.Cut(id, "_")
	if !ok {
		return objectKey{}, fmt.Errorf("inventory id %q is not NAMESPACE_NAME_GROUP_KIND", id)
	}
	rest, kind, ok := cutLast(rest, "_")
	if !ok || kind == "" {
		return objectKey{}, fmt.Errorf("inventory id %q is not NAMESPACE_NAME_GROUP_KIND", id)
	}
	name, group, ok := cutLast(rest, "_")
	if !ok || name == "" {
		return objectKey{}, fmt.Errorf("inventory id %q is not NAMESPACE_NAME_GROUP_KIND", id)
	}
	return objectKey{group: group, kind: kind, namespace: ns, name: strings.ReplaceAll(name, "__", ":")}, nil
}

// pruneByLabels lists, in the namespaces of the output (cluster-wide for
// cluster-scoped kinds), the objects of the output's kinds that knc wrote
// (its managed-by label, or on a Knative object its spec-hash annotation)
// and returns those the build no longer has. Objects knc did not write are
// never candidates, whatever namespace they share.
func pruneByLabels(ctx context.Context, c *Cluster, objs []*unstructured.Unstructured) ([]*unstructured.Unstructured, error) {
	have := outputKeys(objs)
	namespaces := map[string]bool{}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, o := range objs {
		if o.GetNamespace() != "" {
			namespaces[o.GetNamespace()] = true
		}
		kinds[o.GroupVersionKind()] = true
	}
	for _, k := range statusKinds {
		kinds[schema.GroupVersionKind{Group: k.group, Version: "v1", Kind: k.kind}] = true
	}
	seenKind := map[schema.GroupKind]bool{}
	var prune []*unstructured.Unstructured
	for gvk := range kinds {
		if seenKind[gvk.GroupKind()] {
			continue
		}
		seenKind[gvk.GroupKind()] = true
		m, err := c.Mapper.RESTMapping(ctx, gvk.GroupKind(), gvk.Version)
		if err != nil {
			// A kind the cluster does not serve has nothing to prune.
			continue
		}
		knativeKind := kindRank(gvk.Kind) < len(statusKinds) && strings.HasSuffix(gvk.Group, ".knative.dev")
		opts := metav1.ListOptions{}
		if !knativeKind {
			opts.LabelSelector = ManagedByLabel + "=knc"
		}
		var scopes []string
		if m.Scope.Name() == meta.RESTScopeNameNamespace {
			for ns := range namespaces {
				scopes = append(scopes, ns)
			}
		} else {
			scopes = []string{""}
		}
		for _, ns := range scopes {
			list, err := c.Dynamic.Resource(m.Resource).Namespace(ns).List(ctx, opts)
			if err != nil {
				return nil, fmt.Errorf("listing the %s that belong to the output: %w", m.Resource.Resource, err)
			}
			for i := range list.Items {
				u := &list.Items[i]
				if have[keyOf(u)] {
					continue
				}
				if knativeKind {
					if _, ok := u.GetAnnotations()[SpecHashAnnotation]; !ok && u.GetLabels()[ManagedByLabel] != "knc" {
						continue
					}
				}
				prune = append(prune, u)
			}
		}
	}
	return prune, nil
}
