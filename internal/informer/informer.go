// Package informer builds informers of unstructured objects on client-go's
// tools/cache and the dynamic client. It stands in for client-go's
// dynamicinformer, which imports every typed informer and clientset of
// client-go, and with them most of k8s.io/api, into any binary that uses
// it: knc and its runtime only ever watch Knative objects as unstructured.
package informer

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
)

// ForResource returns an informer of the objects of resource in
// namespace ("" for every namespace), resynced every resync (0 for
// never). It lists and watches as dynamicinformer's informers do, with
// watch-list semantics when the API server offers them.
func ForResource(client dynamic.Interface, resource schema.GroupVersionResource, namespace string, resync time.Duration) cache.SharedIndexInformer {
	objects := client.Resource(resource).Namespace(namespace)
	lw := &cache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			return objects.List(ctx, opts)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			return objects.Watch(ctx, opts)
		},
	}
	return cache.NewSharedIndexInformerWithOptions(cache.ToListWatcherWithWatchListSemantics(lw, client), &unstructured.Unstructured{}, cache.SharedIndexInformerOptions{
		ResyncPeriod:      resync,
		ObjectDescription: resource.String(),
	})
}
