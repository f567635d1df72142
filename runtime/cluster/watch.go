package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"

	"github.com/knc-dev/knc/internal/informer"
)

// syncTimeout bounds the wait for a new informer's first list.
const syncTimeout = 30 * time.Second

// watchKey names one informer: a resource in one namespace.
type watchKey struct {
	resource  schema.GroupVersionResource
	namespace string
}

// watches holds the informers of the runtime, started on first use and
// stopped when the runtime stops. Every event on any of them is passed to
// onEvent with the resource, namespace and name of the object.
type watches struct {
	client  dynamic.Interface
	resync  time.Duration
	log     *slog.Logger
	onEvent func(resource schema.GroupVersionResource, namespace, name string)

	mu        sync.Mutex
	ctx       context.Context
	informers map[watchKey]cache.SharedIndexInformer
}

func newWatches(ctx context.Context, client dynamic.Interface, resync time.Duration, log *slog.Logger,
	onEvent func(schema.GroupVersionResource, string, string)) *watches {
	return &watches{client: client, resync: resync, log: log, onEvent: onEvent, ctx: ctx, informers: map[watchKey]cache.SharedIndexInformer{}}
}

// informer returns the synced informer of resource in namespace, starting
// it if needed. A resource the runtime may not list is an error at once,
// rather than an informer that retries in the background forever.
func (w *watches) informer(ctx context.Context, resource schema.GroupVersionResource, namespace string) (cache.SharedIndexInformer, error) {
	key := watchKey{resource, namespace}
	w.mu.Lock()
	inf, ok := w.informers[key]
	w.mu.Unlock()
	if !ok {
		// The probe is outside the lock: it is a request to the API server.
		_, err := w.client.Resource(resource).Namespace(namespace).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return nil, fmt.Errorf("listing %s in namespace %s: %w", resource.GroupResource(), namespace, err)
		}
		w.mu.Lock()
		inf, ok = w.informers[key]
		if !ok {
			inf = informer.ForResource(w.client, resource, namespace, w.resync)
			_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
				AddFunc:    func(obj any) { w.event(resource, obj) },
				UpdateFunc: func(_, obj any) { w.event(resource, obj) },
				DeleteFunc: func(obj any) { w.event(resource, obj) },
			})
			_ = inf.SetWatchErrorHandlerWithContext(func(_ context.Context, _ *cache.Reflector, err error) {
				w.log.Warn("watch failed; retrying", "resource", resource.String(), "namespace", namespace, "error", err)
			})
			w.informers[key] = inf
			go inf.RunWithContext(w.ctx)
		}
		w.mu.Unlock()
	}
	sctx, cancel := context.WithTimeout(ctx, syncTimeout)
	defer cancel()
	if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
		return nil, fmt.Errorf("watching %s in namespace %s: %w", resource.GroupResource(), namespace, errors.Join(sctx.Err(), w.ctx.Err()))
	}
	return inf, nil
}

func (w *watches) event(resource schema.GroupVersionResource, obj any) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	u, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	w.onEvent(resource, u.GetNamespace(), u.GetName())
}

// get returns the cached object, or nil when it does not exist.
func (w *watches) get(ctx context.Context, resource schema.GroupVersionResource, namespace, name string) (*unstructured.Unstructured, error) {
	inf, err := w.informer(ctx, resource, namespace)
	if err != nil {
		return nil, err
	}
	obj, ok, err := inf.GetStore().GetByKey(namespace + "/" + name)
	if err != nil || !ok {
		return nil, err
	}
	u, _ := obj.(*unstructured.Unstructured)
	return u, nil
}

// list returns the cached objects of resource in namespace.
func (w *watches) list(ctx context.Context, resource schema.GroupVersionResource, namespace string) ([]*unstructured.Unstructured, error) {
	inf, err := w.informer(ctx, resource, namespace)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, obj := range inf.GetStore().List() {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			out = append(out, u)
		}
	}
	return out, nil
}
