package informer_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	"github.com/knc-dev/knc/internal/informer"
	"github.com/knc-dev/knc/internal/kubetest"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// recorder keeps what an informer told its handler, per object.
type recorder struct {
	mu     sync.Mutex
	events map[string][]string
}

func (r *recorder) handler() cache.ResourceEventHandlerFuncs {
	note := func(what string, obj any) {
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u := obj.(*unstructured.Unstructured)
		r.mu.Lock()
		defer r.mu.Unlock()
		key := u.GetNamespace() + "/" + u.GetName()
		r.events[key] = append(r.events[key], what+" "+u.GetLabels()["step"])
	}
	return cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { note("add", obj) },
		UpdateFunc: func(_, obj any) { note("update", obj) },
		DeleteFunc: func(obj any) { note("delete", obj) },
	}
}

func (r *recorder) snapshot() map[string][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string][]string{}
	for k, v := range r.events {
		out[k] = slices.Clone(v)
	}
	return out
}

// storeKeys lists what a store holds, as namespace/name step.
func storeKeys(s cache.Store) []string {
	var out []string
	for _, item := range s.List() {
		u := item.(*unstructured.Unstructured)
		out = append(out, u.GetNamespace()+"/"+u.GetName()+" "+u.GetLabels()["step"])
	}
	slices.Sort(out)
	return out
}

// TestForResourceSeesWhatDynamicInformerSees runs an informer of
// ForResource beside one of client-go's dynamicinformer, which it stands
// in for, on the same namespace of a custom resource, through objects
// that exist before they start and objects created, updated and deleted
// after: both must tell their handlers the same events and hold the same
// objects, and neither the objects of another namespace.
func TestForResourceSeesWhatDynamicInformerSees(t *testing.T) {
	env := kubetest.Current(t)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	group := fmt.Sprintf("i%d.informer.test.knc.dev", time.Now().UnixNano())
	if err := env.InstallCRDYAML(ctx, kubetest.SchemalessCRD(group, "Thing", "things")); err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: group, Version: "v1", Resource: "things"}
	dyn, err := dynamic.NewForConfig(env.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, ns := range []string{"watched", "elsewhere"} {
		_, err := env.Clientset().CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	things := func(ns string) dynamic.ResourceInterface { return dyn.Resource(gvr).Namespace(ns) }
	thing := func(ns, name, step string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{}
		u.SetAPIVersion(group + "/v1")
		u.SetKind("Thing")
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(map[string]string{"step": step})
		return u
	}
	create := func(ns, name, step string) {
		t.Helper()
		if _, err := things(ns).Create(ctx, thing(ns, name, step), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	create("watched", "before", "1")
	create("elsewhere", "other", "1")

	ours, theirs := &recorder{events: map[string][]string{}}, &recorder{events: map[string][]string{}}
	inf := informer.ForResource(dyn, gvr, "watched", 0)
	if _, err := inf.AddEventHandler(ours.handler()); err != nil {
		t.Fatal(err)
	}
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, "watched", nil)
	ref := factory.ForResource(gvr).Informer()
	if _, err := ref.AddEventHandler(theirs.handler()); err != nil {
		t.Fatal(err)
	}
	runCtx, stop := context.WithCancel(ctx)
	var running sync.WaitGroup
	running.Go(func() { inf.RunWithContext(runCtx) })
	factory.Start(runCtx.Done())
	defer func() {
		stop()
		running.Wait()
		factory.Shutdown()
	}()
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced, ref.HasSynced) {
		t.Fatal("the informers did not sync")
	}

	create("watched", "after", "1")
	create("elsewhere", "other2", "1")
	u, err := things("watched").Get(ctx, "before", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u.SetLabels(map[string]string{"step": "2"})
	if _, err := things("watched").Update(ctx, u, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := things("watched").Delete(ctx, "after", metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}

	want := map[string][]string{
		"watched/before": {"add 1", "update 2"},
		"watched/after":  {"add 1", "delete 1"},
	}
	// Poll until the reference has seen every change, then compare.
	for !cmp.Equal(want, theirs.snapshot()) || !cmp.Equal(want, ours.snapshot()) {
		select {
		case <-ctx.Done():
			t.Fatalf("the informers did not see every change:\nForResource (-want +got):\n%s\ndynamicinformer (-want +got):\n%s",
				cmp.Diff(want, ours.snapshot()), cmp.Diff(want, theirs.snapshot()))
		case <-time.After(20 * time.Millisecond):
		}
	}
	if diff := cmp.Diff(storeKeys(ref.GetStore()), storeKeys(inf.GetStore())); diff != "" {
		t.Errorf("the stores differ (-dynamicinformer +ForResource):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"watched/before 2"}, storeKeys(inf.GetStore())); diff != "" {
		t.Errorf("ForResource's store (-want +got):\n%s", diff)
	}
}
