package cluster

import (
	"context"
	"fmt"
	"net/url"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/resolve"
)

// DefaultClusterDomain is the DNS domain of a cluster's Services.
const DefaultClusterDomain = "cluster.local"

// mapper maps a referent's kind to its resource. A kind installed after
// the runtime started is found: a miss asks the API server again.
type mapper interface {
	RESTMapping(ctx context.Context, gk schema.GroupKind, version string) (*meta.RESTMapping, error)
}

// Resolver resolves the Refs of a routing table through the Kubernetes API:
// the referent's status.address.url (the Addressable duck type), or, for a
// v1 Service, http://NAME.NAMESPACE.svc.DOMAIN/. It reads referents from
// informers, so resolving is cheap and a change to a referent is seen: the
// runtime re-resolves the table when one of the referents it tracks changes.
type Resolver struct {
	watches       *watches
	mapper        mapper
	clusterDomain string

	mu      sync.Mutex
	tracked map[targetKey]bool
}

// targetKey names one referent.
type targetKey struct {
	resource        schema.GroupVersionResource
	namespace, name string
}

func newResolver(w *watches, m mapper, clusterDomain string) *Resolver {
	if clusterDomain == "" {
		clusterDomain = DefaultClusterDomain
	}
	return &Resolver{watches: w, mapper: m, clusterDomain: clusterDomain, tracked: map[targetKey]bool{}}
}

// tracks reports whether an object is the referent of a Ref resolved since
// the last resolveAll.
func (r *Resolver) tracks(resource schema.GroupVersionResource, namespace, name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.tracked[targetKey{resource, namespace, name}]
}

// resolveAll resolves every Destination of t and tracks the referents of
// its Refs (and only those) from then on.
func (r *Resolver) resolveAll(ctx context.Context, t *routing.Table) resolve.Results {
	r.mu.Lock()
	r.tracked = map[targetKey]bool{}
	r.mu.Unlock()
	return resolve.All(ctx, t, r)
}

// Resolve implements resolve.Resolver.
func (r *Resolver) Resolve(ctx context.Context, d routing.Destination) (*url.URL, error) {
	if d.Ref == nil {
		return absolute(d.URI)
	}
	ref := d.Ref
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s: apiVersion %q: %w", ref.Kind, ref.Namespace, ref.Name, ref.APIVersion, err)
	}
	gk := gv.WithKind(ref.Kind).GroupKind()
	mapping, err := r.mapper.RESTMapping(ctx, gk, gv.Version)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s (%s): %w: %w", ref.Kind, ref.Namespace, ref.Name, ref.APIVersion, resolve.ErrNotAddressable, err)
	}
	key := targetKey{mapping.Resource, ref.Namespace, ref.Name}
	r.mu.Lock()
	r.tracked[key] = true
	r.mu.Unlock()
	obj, err := r.watches.get(ctx, mapping.Resource, ref.Namespace, ref.Name)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s (%s): %w", ref.Kind, ref.Namespace, ref.Name, ref.APIVersion, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%s %s/%s (%s) does not exist: %w", ref.Kind, ref.Namespace, ref.Name, ref.APIVersion, resolve.ErrNotAddressable)
	}
	base, err := r.address(gk, obj)
	if err != nil {
		return nil, fmt.Errorf("%s %s/%s (%s): %w", ref.Kind, ref.Namespace, ref.Name, ref.APIVersion, err)
	}
	return resolve.Relative(base, d.URI)
}

// address reads the address of a referent.
func (r *Resolver) address(gk schema.GroupKind, obj *unstructured.Unstructured) (*url.URL, error) {
	if gk == (schema.GroupKind{Kind: "Service"}) {
		// The control-plane contract's special case for a v1 Service.
		return &url.URL{Scheme: "http", Host: fmt.Sprintf("%s.%s.svc.%s", obj.GetName(), obj.GetNamespace(), r.clusterDomain), Path: "/"}, nil
	}
	raw, _, _ := unstructured.NestedString(obj.Object, "status", "address", "url")
	if raw == "" {
		return nil, fmt.Errorf("%w: it has no status.address.url", resolve.ErrNotAddressable)
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("%w: status.address.url %q is not an absolute URL", resolve.ErrNotAddressable, raw)
	}
	return u, nil
}

func absolute(uri string) (*url.URL, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("uri %q: %w", uri, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return nil, fmt.Errorf("uri %q is not absolute and has no ref to resolve it against", uri)
	}
	return u, nil
}

// snapshot resolves every Destination to the result resolveAll found for
// it, so that the engine programs exactly what the status reports.
type snapshot struct {
	results map[destinationKey]resolve.Result
}

// destinationKey is a Destination as a comparable value.
type destinationKey struct {
	uri    string
	hasRef bool
	ref    routing.Ref
}

func keyOf(d routing.Destination) destinationKey {
	k := destinationKey{uri: d.URI}
	if d.Ref != nil {
		k.hasRef, k.ref = true, *d.Ref
	}
	return k
}

// newSnapshot indexes the results of t's Destinations by Destination.
// resolve.All resolves equal Destinations equally, so the result of any
// site of a Destination is the result of all of them.
func newSnapshot(t *routing.Table, results resolve.Results) *snapshot {
	s := &snapshot{results: map[destinationKey]resolve.Result{}}
	visit := func(kind string, o routing.Source, field string, d *routing.Destination) {
		if d == nil {
			return
		}
		if res, ok := results.Lookup(kind, o, field); ok {
			s.results[keyOf(*d)] = res
		}
	}
	for i := range t.Brokers {
		b := &t.Brokers[i]
		visit(knative.KindBroker, b.Source, resolve.FieldDeadLetterSink, deadLetterSink(b.Delivery))
		for j := range b.Triggers {
			tr := &b.Triggers[j]
			visit(knative.KindTrigger, tr.Source, resolve.FieldSubscriber, &tr.Subscriber)
			visit(knative.KindTrigger, tr.Source, resolve.FieldDeadLetterSink, deadLetterSink(tr.Delivery))
		}
	}
	for i := range t.Channels {
		c := &t.Channels[i]
		visit(knative.KindChannel, c.Source, resolve.FieldDeadLetterSink, deadLetterSink(c.Delivery))
		for j := range c.Subscriptions {
			sub := &c.Subscriptions[j]
			visit(knative.KindSubscription, sub.Source, resolve.FieldSubscriber, sub.Subscriber)
			visit(knative.KindSubscription, sub.Source, resolve.FieldReply, sub.Reply)
			visit(knative.KindSubscription, sub.Source, resolve.FieldDeadLetterSink, deadLetterSink(sub.Delivery))
		}
	}
	return s
}

// Resolve implements resolve.Resolver.
func (s *snapshot) Resolve(_ context.Context, d routing.Destination) (*url.URL, error) {
	res, ok := s.results[keyOf(d)]
	if !ok {
		return nil, fmt.Errorf("%w: not resolved yet", resolve.ErrNotAddressable)
	}
	if res.Err != nil {
		return nil, res.Err
	}
	return url.Parse(res.URL)
}

// equal reports whether two snapshots resolve every Destination alike.
func (s *snapshot) equal(o *snapshot) bool {
	if s == nil || o == nil {
		return s == o
	}
	if len(s.results) != len(o.results) {
		return false
	}
	for k, a := range s.results {
		b, ok := o.results[k]
		if !ok || a.URL != b.URL || (a.Err == nil) != (b.Err == nil) || a.Err != nil && a.Err.Error() != b.Err.Error() {
			return false
		}
	}
	return true
}

func deadLetterSink(d *routing.Delivery) *routing.Destination {
	if d == nil {
		return nil
	}
	return d.DeadLetterSink
}
