package live

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/duration"

	"github.com/knc-dev/knc/internal/knative"
)

// ReadStatus lists the Knative objects scope names and makes their status
// tree: one list request per kind and namespace (one per kind for all
// namespaces), so that a thousand Triggers cost one request, not a
// thousand.
func ReadStatus(ctx context.Context, c *Cluster, scope Scope) (*Status, error) {
	namespaces := scope.namespaces()
	type list struct {
		kind statusKind
		ns   string
	}
	var lists []list
	for _, k := range statusKinds {
		for _, ns := range namespaces {
			lists = append(lists, list{k, ns})
		}
	}
	results := make([][]unstructured.Unstructured, len(lists))
	errs := make([]error, len(lists))
	var wg sync.WaitGroup
	for i, l := range lists {
		wg.Go(func() {
			got, err := c.Dynamic.Resource(l.kind.gvr()).Namespace(l.ns).List(ctx, metav1.ListOptions{})
			switch {
			case apierrors.IsNotFound(err):
				// The cluster does not serve the kind: no sources
				// or flows installed.
			case err != nil:
				where := "all namespaces"
				if l.ns != "" {
					where = "namespace " + l.ns
				}
				errs[i] = fmt.Errorf("listing the %s of %s: %w", l.kind.resource, where, err)
			default:
				results[i] = got.Items
			}
		})
	}
	wg.Wait()
	if err := firstError(errs); err != nil {
		return nil, err
	}
	var objs []*unstructured.Unstructured
	for _, items := range results {
		for i := range items {
			objs = append(objs, &items[i])
		}
	}
	st := BuildStatus(objs, scope)
	st.Context = c.Context
	return st, nil
}

func firstError(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// namespaces are the namespaces to list: "" for all of them.
func (s Scope) namespaces() []string {
	if s.AllNamespaces {
		return []string{""}
	}
	set := map[string]bool{}
	for _, ns := range s.Namespaces {
		set[ns] = true
	}
	for _, o := range s.Objects {
		set[o.Namespace] = true
	}
	return slices.Sorted(func(yield func(string) bool) {
		for ns := range set {
			if !yield(ns) {
				return
			}
		}
	})
}

// BuildStatus makes the status tree of the live objects objs, limited to
// scope's Objects when it names any.
func BuildStatus(objs []*unstructured.Unstructured, scope Scope) *Status {
	var want map[Ref]bool
	if len(scope.Objects) > 0 {
		want = map[Ref]bool{}
		for _, r := range scope.Objects {
			want[r] = true
		}
	}
	found := map[Ref]bool{}
	var all []Object
	for _, u := range objs {
		ref := Ref{Group: groupOf(u.GetAPIVersion()), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName()}
		if want != nil && !want[ref] {
			continue
		}
		found[ref] = true
		all = append(all, objectOf(u))
	}
	for _, r := range scope.Objects {
		if !found[r] {
			all = append(all, Object{APIVersion: r.Group + "/" + knative.Version, Kind: r.Kind, Namespace: r.Namespace, Name: r.Name, Reason: "NotFound", Message: "in the build, not in the cluster", Missing: true, parent: scope.parents[r]})
		}
	}
	return tree(all)
}

// tree puts each Trigger under its Broker and each Subscription under its
// Channel, when the cluster has them; the rest are roots.
func tree(all []Object) *Status {
	slices.SortFunc(all, func(a, b Object) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)), cmp.Compare(a.Name, b.Name))
	})
	type parentKey struct{ kind, ns, name string }
	parents := map[parentKey]int{}
	var roots []Object
	for _, o := range all {
		if o.Kind == knative.KindBroker || o.Kind == knative.KindChannel {
			parents[parentKey{o.Kind, o.Namespace, o.Name}] = len(roots)
		}
		if p, ok := parentOf(o); ok {
			if i, ok := parents[parentKey{p.kind, o.Namespace, p.name}]; ok {
				roots[i].Children = append(roots[i].Children, o)
				continue
			}
		}
		roots = append(roots, o)
	}
	st := &Status{Objects: roots}
	if st.Objects == nil {
		st.Objects = []Object{}
	}
	var count func([]Object)
	count = func(objs []Object) {
		for i := range objs {
			st.Total++
			if !objs[i].IsReady() {
				st.NotReady++
			}
			count(objs[i].Children)
		}
	}
	count(st.Objects)
	st.Ready = st.NotReady == 0
	return st
}

type parent struct{ kind, name string }

// parentOf is the Broker of a Trigger or the Channel of a Subscription.
// Brokers and Channels sort before Triggers and Subscriptions, so the
// parent is placed first.
func parentOf(o Object) (parent, bool) {
	if o.parent.name == "" {
		return parent{}, false
	}
	return o.parent, true
}

func groupOf(apiVersion string) string {
	g, _, ok := cutLast(apiVersion, "/")
	if !ok {
		return ""
	}
	return g
}

func cutLast(s, sep string) (string, string, bool) {
	for i := len(s) - len(sep); i >= 0; i-- {
		if s[i:i+len(sep)] == sep {
			return s[:i], s[i+len(sep):], true
		}
	}
	return s, "", false
}

// objectOf reads the state of one live object.
func objectOf(u *unstructured.Unstructured) Object {
	o := Object{APIVersion: u.GetAPIVersion(), Kind: u.GetKind(), Namespace: u.GetNamespace(), Name: u.GetName(), Generation: u.GetGeneration()}
	if t := u.GetCreationTimestamp(); !t.IsZero() {
		created := t.UTC()
		o.Created = &created
	}
	o.ObservedGeneration, _, _ = unstructured.NestedInt64(u.Object, "status", "observedGeneration")
	o.Address, _, _ = unstructured.NestedString(u.Object, "status", "address", "url")
	o.SinkURI, _, _ = unstructured.NestedString(u.Object, "status", "sinkUri")
	o.SubscriberURI, _, _ = unstructured.NestedString(u.Object, "status", "subscriberUri")
	if o.SubscriberURI == "" {
		o.SubscriberURI, _, _ = unstructured.NestedString(u.Object, "status", "physicalSubscription", "subscriberUri")
	}
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] != "Ready" {
			continue
		}
		o.Ready, _ = m["status"].(string)
		o.Reason, _ = m["reason"].(string)
		o.Message, _ = m["message"].(string)
	}
	switch o.Kind {
	case knative.KindTrigger:
		name, _, _ := unstructured.NestedString(u.Object, "spec", "broker")
		o.parent = parent{knative.KindBroker, name}
	case knative.KindSubscription:
		kind, _, _ := unstructured.NestedString(u.Object, "spec", "channel", "kind")
		name, _, _ := unstructured.NestedString(u.Object, "spec", "channel", "name")
		if kind == knative.KindChannel {
			o.parent = parent{knative.KindChannel, name}
		}
	}
	return o
}

// age is how long ago t was, as kubectl prints it.
func age(t *time.Time, now time.Time) string {
	if t == nil {
		return "-"
	}
	return duration.HumanDuration(now.Sub(*t))
}
