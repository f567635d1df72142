package kubetest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knc-dev/knc/internal/kubetest"
)

func TestKustomize(t *testing.T) {
	objs, err := kubetest.Kustomize("testdata/kustomization")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, o := range objs {
		got = append(got, fmt.Sprintf("%s %s/%s %s", o.GetKind(), o.GetNamespace(), o.GetName(), o.GetLabels()["app.kubernetes.io/part-of"]))
	}
	slices.Sort(got)
	want := []string{
		"ConfigMap kubetest-apply/settings kubetest-apply",
		"CustomResourceDefinition /sprockets.apply.kubetest.knc.dev kubetest-apply",
		"Namespace /kubetest-apply kubetest-apply",
		"Sprocket kubetest-apply/first kubetest-apply",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("objects built (-want +got):\n%s", diff)
	}

	if _, err := kubetest.Kustomize("testdata/no-such-kustomization"); err == nil || !strings.Contains(err.Error(), "no-such-kustomization") {
		t.Errorf("Kustomize of a missing directory: %v, want an error naming it", err)
	}
}

// TestApplyOrdersGroups applies a custom resource before its CRD and a
// namespaced object before its Namespace; Apply must reorder them.
func TestApplyOrdersGroups(t *testing.T) {
	env := kubetest.Current(t)
	ctx := ctxFor(t)
	objs, err := kubetest.Kustomize("testdata/kustomization")
	if err != nil {
		t.Fatal(err)
	}
	// Custom resource first, CRD and Namespace last, whatever order
	// kustomize chose.
	slices.SortStableFunc(objs, func(a, b *unstructured.Unstructured) int {
		rank := map[string]int{"Sprocket": 0, "ConfigMap": 1, "CustomResourceDefinition": 2, "Namespace": 3}
		return rank[a.GetKind()] - rank[b.GetKind()]
	})
	applier := env.Applier(t)
	if err := applier.Apply(ctx, objs, kubetest.ApplyOptions{FieldManager: "kubetest-apply", DryRunFirst: true}); err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		r, err := applier.Resource(o)
		if err != nil {
			t.Fatal(err)
		}
		got, err := r.Get(ctx, o.GetName(), metav1.GetOptions{})
		if err != nil {
			t.Errorf("%s %s after Apply: %v", o.GetKind(), o.GetName(), err)
			continue
		}
		var managers []string
		for _, f := range got.GetManagedFields() {
			if f.Operation == metav1.ManagedFieldsOperationApply {
				managers = append(managers, f.Manager)
			}
		}
		if diff := cmp.Diff([]string{"kubetest-apply"}, managers); diff != "" {
			t.Errorf("%s %s: server-side appliers (-want +got):\n%s", o.GetKind(), o.GetName(), diff)
		}
	}
}

func configMap(namespace, name string) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"namespace": namespace, "name": name},
		"data":       map[string]any{"k": "v"},
	}}
}

func TestApplyErrors(t *testing.T) {
	env := kubetest.Current(t)
	ns := env.Namespace(t)
	applier := env.Applier(t)
	unknownKind := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "example.com/v1", "kind": "Nothing",
		"metadata": map[string]any{"namespace": ns, "name": "x"},
	}}
	badNamespace := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": "Not_A_Name"},
	}}
	type result struct {
		// Error holds the parts of the error checked for.
		Error []string
		// GoodApplied says whether the valid ConfigMap exists afterwards.
		GoodApplied bool
	}
	tests := []struct {
		name   string
		dryRun bool
		objs   func(good *unstructured.Unstructured) []*unstructured.Unstructured
		want   result
	}{
		{
			name:   "a refused object keeps its group from being applied after a dry run",
			dryRun: true,
			objs: func(good *unstructured.Unstructured) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{good, configMap(ns, "Not_A_Name")}
			},
			want: result{Error: []string{"server-side dry run", "ConfigMap " + ns + "/Not_A_Name"}},
		},
		{
			name: "without a dry run every object of the group is tried",
			objs: func(good *unstructured.Unstructured) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{configMap(ns, "Not_A_Name"), good}
			},
			want: result{Error: []string{"server-side apply", "ConfigMap " + ns + "/Not_A_Name"}, GoodApplied: true},
		},
		{
			name: "every error is reported",
			objs: func(good *unstructured.Unstructured) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{unknownKind, configMap(ns, "Not_A_Name"), good}
			},
			want: result{Error: []string{"server-side apply", "Nothing x", "ConfigMap " + ns + "/Not_A_Name"}, GoodApplied: true},
		},
		{
			name: "a group with errors ends the apply",
			objs: func(good *unstructured.Unstructured) []*unstructured.Unstructured {
				return []*unstructured.Unstructured{good, badNamespace}
			},
			want: result{Error: []string{"server-side apply", "Namespace /Not_A_Name"}},
		},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := ctxFor(t)
			good := configMap(ns, fmt.Sprintf("good-%d", i))
			err := applier.Apply(ctx, tt.objs(good), kubetest.ApplyOptions{FieldManager: "kubetest-apply", DryRunFirst: tt.dryRun})
			var got result
			if err != nil {
				for _, part := range tt.want.Error {
					if strings.Contains(err.Error(), part) {
						got.Error = append(got.Error, part)
					}
				}
			}
			_, getErr := env.Clientset().CoreV1().ConfigMaps(ns).Get(ctx, good.GetName(), metav1.GetOptions{})
			got.GoodApplied = getErr == nil
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Apply: %v\nresult (-want +got):\n%s", err, diff)
			}
		})
	}
}

func TestAggregateClusterRoles(t *testing.T) {
	env := kubetest.Current(t)
	ctx := ctxFor(t)
	// ClusterRoles are not namespaced; a fresh namespace's name keeps
	// these, and their label, to this run.
	prefix := env.Namespace(t)
	selected := map[string]string{"kubetest.knc.dev/aggregate-to": prefix}
	rule := func(verb, resource string) rbacv1.PolicyRule {
		return rbacv1.PolicyRule{APIGroups: []string{""}, Resources: []string{resource}, Verbs: []string{verb}}
	}
	roles := []rbacv1.ClusterRole{
		{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-a", Labels: selected}, Rules: []rbacv1.PolicyRule{rule("get", "pods")}},
		{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-b", Labels: selected}, Rules: []rbacv1.PolicyRule{rule("list", "configmaps")}},
		{ObjectMeta: metav1.ObjectMeta{Name: prefix + "-unselected"}, Rules: []rbacv1.PolicyRule{rule("delete", "secrets")}},
		// Labelled so that its selector matches it too: its own rules
		// must not feed back into it.
		{
			ObjectMeta:      metav1.ObjectMeta{Name: prefix + "-all", Labels: selected},
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{MatchLabels: selected}}},
		},
	}
	cs := env.Clientset().RbacV1().ClusterRoles()
	for _, r := range roles {
		if _, err := cs.Create(ctx, &r, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			// The test's context is done by the time cleanups run.
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			if err := cs.Delete(ctx, r.Name, metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting ClusterRole %s: %v", r.Name, err)
			}
		})
	}
	want := []rbacv1.PolicyRule{rule("get", "pods"), rule("list", "configmaps")}
	// Twice: aggregating again changes nothing.
	for round := 1; round <= 2; round++ {
		aggregated, err := env.AggregateClusterRoles(ctx)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(aggregated, func(r rbacv1.ClusterRole) bool { return r.Name == prefix+"-all" })
		if i < 0 {
			t.Fatalf("round %d: %s is not among the aggregated ClusterRoles", round, prefix+"-all")
		}
		if diff := cmp.Diff(want, aggregated[i].Rules); diff != "" {
			t.Errorf("round %d: returned rules (-want +got):\n%s", round, diff)
		}
		stored, err := cs.Get(ctx, prefix+"-all", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, stored.Rules); diff != "" {
			t.Errorf("round %d: stored rules (-want +got):\n%s", round, diff)
		}
	}
}
