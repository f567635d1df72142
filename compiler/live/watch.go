package live

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	"github.com/knc-dev/knc/internal/informer"
)

// WatchStatus calls changed with the status of scope's objects, first as
// it is and then each time it changes, until ctx is done. It watches the
// kinds the cluster serves with informers, one per kind and namespace,
// and builds the status from their caches. It returns nil when ctx ends,
// so that the caller keeps the last status it was given.
func WatchStatus(ctx context.Context, c *Cluster, scope Scope, changed func(*Status) error) error {
	ctx, cancel := context.WithCancel(ctx)
	var running sync.WaitGroup
	defer func() {
		// The informers stop once ctx is cancelled; wait for them.
		cancel()
		running.Wait()
	}()
	wake := make(chan struct{}, 1)
	notify := func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	}
	handler := cache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { notify() },
		UpdateFunc: func(any, any) { notify() },
		DeleteFunc: func(any) { notify() },
	}
	var stores []cache.Store
	var synced []cache.InformerSynced
	for _, ns := range scope.namespaces() {
		for _, k := range statusKinds {
			if _, err := c.Mapper.RESTMapping(ctx, schema.GroupKind{Group: k.group, Kind: k.kind}, "v1"); err != nil {
				if meta.IsNoMatchError(err) {
					continue
				}
				return fmt.Errorf("finding the %s of the cluster: %w", k.resource, err)
			}
			inf := informer.ForResource(c.Dynamic, k.gvr(), ns, 0)
			if _, err := inf.AddEventHandler(handler); err != nil {
				return err
			}
			stores = append(stores, inf.GetStore())
			synced = append(synced, inf.HasSynced)
			running.Go(func() { inf.RunWithContext(ctx) })
		}
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		if ctx.Err() != nil {
			return nil
		}
		return fmt.Errorf("the watches of the Knative objects did not sync")
	}
	var last *Status
	for {
		var objs []*unstructured.Unstructured
		for _, s := range stores {
			for _, item := range s.List() {
				if u, ok := item.(*unstructured.Unstructured); ok {
					objs = append(objs, u)
				}
			}
		}
		st := BuildStatus(objs, scope)
		st.Context = c.Context
		if last == nil || !reflect.DeepEqual(last, st) {
			if err := changed(st); err != nil {
				return err
			}
			last = st
		}
		select {
		case <-ctx.Done():
			return nil
		case <-wake:
		}
	}
}
