package statuspatch_test

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"

	fluxconditions "github.com/fluxcd/pkg/runtime/conditions"
	fluxpatch "github.com/fluxcd/pkg/runtime/patch"
	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/runtime/cluster"
	"github.com/knc-dev/knc/runtime/cluster/statuspatch"
	"github.com/knc-dev/knc/runtime/status"
)

func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }

// thingCRD is a kind with a status subresource whose objects the tests
// write, as Knative's CRDs are for the runtime.
var thingCRD = kubetest.SchemalessCRD("statuspatch.test.knc.dev", "Thing", "things")

var (
	thingKind = schema.GroupVersionKind{Group: "statuspatch.test.knc.dev", Version: "v1", Kind: "Thing"}
	things    = schema.GroupVersionResource{Group: "statuspatch.test.knc.dev", Version: "v1", Resource: "things"}
)

// owned are the condition types the tests' knc writer owns.
var owned = []string{"Ready", "Addressable"}

// writer writes a status change the way one implementation does. Its
// client's Get calls w.afterGet after reading, so that a test can change
// the object between the read and the patch.
type writer interface {
	set(o *cluster.LiveObject, c *metav1.Condition)
	del(o *cluster.LiveObject, t string)
	write(ctx context.Context, w *world, before, after *cluster.LiveObject) error
}

// flux is the reference: Flux's conditions and patch helper over
// controller-runtime's client, as the runtime wrote status before.
type flux struct{ client client.Client }

func (flux) set(o *cluster.LiveObject, c *metav1.Condition) { fluxconditions.Set(o, c) }
func (flux) del(o *cluster.LiveObject, t string)            { fluxconditions.Delete(o, t) }

func (f flux) write(ctx context.Context, w *world, before, after *cluster.LiveObject) error {
	helper, err := fluxpatch.NewHelper(before, hookedClient{f.client, w})
	if err != nil {
		return err
	}
	return helper.Patch(ctx, after,
		fluxpatch.WithOwnedConditions{Conditions: owned},
		fluxpatch.WithStatusObservedGeneration{},
		fluxpatch.WithFieldOwner(cluster.FieldOwner))
}

type hookedClient struct {
	client.Client
	w *world
}

func (c hookedClient) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	err := c.Client.Get(ctx, key, obj, opts...)
	c.w.afterGet()
	return err
}

// ours is package statuspatch over the dynamic client.
type ours struct{ client dynamic.Interface }

func (ours) set(o *cluster.LiveObject, c *metav1.Condition) { statuspatch.Set(o, c) }
func (ours) del(o *cluster.LiveObject, t string)            { statuspatch.Delete(o, t) }

func (s ours) write(ctx context.Context, w *world, before, after *cluster.LiveObject) error {
	res := hookedResource{s.client.Resource(things).Namespace(w.ns), w}
	return statuspatch.Patch(ctx, res, before, after, statuspatch.Options{FieldManager: cluster.FieldOwner, OwnedConditions: owned})
}

type hookedResource struct {
	dynamic.ResourceInterface
	w *world
}

func (r hookedResource) Get(ctx context.Context, name string, opts metav1.GetOptions, sub ...string) (*unstructured.Unstructured, error) {
	u, err := r.ResourceInterface.Get(ctx, name, opts, sub...)
	r.w.afterGet()
	return u, err
}

// world is one object of the API server, a writer that writes its status
// as knc does, and another writer that writes it with Update.
type world struct {
	t      *testing.T
	ctx    context.Context
	dyn    dynamic.Interface
	ns     string
	name   string
	writer writer
	start  time.Time

	// hooks run, one each, after the writer's next reads of the object.
	hooks []func()
	// errs records whether each knc write failed; states, the status
	// after each step.
	errs   []bool
	states []state
}

// state is what the tests compare of an object after a step.
type state struct {
	Generation int64
	Status     cluster.LiveStatus
	Managers   []string
}

func (w *world) afterGet() {
	if len(w.hooks) > 0 {
		h := w.hooks[0]
		w.hooks = w.hooks[1:]
		h()
	}
}

func (w *world) resource() dynamic.ResourceInterface { return w.dyn.Resource(things).Namespace(w.ns) }

func (w *world) get() *unstructured.Unstructured {
	w.t.Helper()
	u, err := w.resource().Get(w.ctx, w.name, metav1.GetOptions{})
	if err != nil {
		w.t.Fatal(err)
	}
	return u
}

// read returns the object as an informer would hold it.
func (w *world) read() *cluster.LiveObject {
	w.t.Helper()
	o := &cluster.LiveObject{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(w.get().Object, o); err != nil {
		w.t.Fatal(err)
	}
	return o
}

// knc changes the conditions of from with ops, and the other status
// fields with edit, and writes the change; from may be stale.
func (w *world) knc(from *cluster.LiveObject, ops []op, edit func(*cluster.LiveStatus)) {
	w.t.Helper()
	after := from.DeepCopyObject().(*cluster.LiveObject)
	for _, op := range ops {
		if op.set != nil {
			c := *op.set
			w.writer.set(after, &c)
		} else {
			w.writer.del(after, op.del)
		}
	}
	if edit != nil {
		edit(&after.Status)
	}
	err := w.writer.write(w.ctx, w, from, after)
	w.errs = append(w.errs, err != nil)
	w.record()
}

// foreign changes the object as another writer does: edit changes its
// status map (written through /status), or its spec when spec is true.
func (w *world) foreign(spec bool, edit func(obj map[string]any)) {
	w.t.Helper()
	u := w.get()
	edit(u.Object)
	var err error
	if spec {
		_, err = w.resource().Update(w.ctx, u, metav1.UpdateOptions{FieldManager: "other"})
	} else {
		_, err = w.resource().UpdateStatus(w.ctx, u, metav1.UpdateOptions{FieldManager: "other"})
	}
	if err != nil {
		w.t.Fatal(err)
	}
	w.record()
}

func (w *world) record() {
	w.t.Helper()
	u := w.get()
	o := &cluster.LiveObject{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, o); err != nil {
		w.t.Fatal(err)
	}
	o.Status.Conditions = normalized(o.Status.Conditions, w.start)
	var managers []string
	for _, m := range u.GetManagedFields() {
		managers = append(managers, fmt.Sprintf("%s %s %s", m.Manager, m.Operation, m.Subresource))
	}
	slices.Sort(managers)
	w.states = append(w.states, state{Generation: o.Generation, Status: o.Status, Managers: managers})
}

// setCondition sets a condition in an object map, as another writer
// would, with the old time.
func setCondition(obj map[string]any, t, status, reason string) {
	conds, _, _ := unstructured.NestedSlice(obj, "status", "conditions")
	c := map[string]any{"type": t, "status": status, "reason": reason, "lastTransitionTime": old}
	i := slices.IndexFunc(conds, func(v any) bool { return v.(map[string]any)["type"] == t })
	if i < 0 {
		conds = append(conds, c)
	} else {
		conds[i] = c
	}
	_ = unstructured.SetNestedSlice(obj, conds, "status", "conditions")
}

func bumpSpec(obj map[string]any) {
	n, _, _ := unstructured.NestedInt64(obj, "spec", "n")
	_ = unstructured.SetNestedField(obj, n+1, "spec", "n")
}

// scenarios are sequences of writes by knc and another writer.
var scenarios = []struct {
	name string
	run  func(w *world)
}{
	{"the first write, one without a change, and a new generation", func(w *world) {
		w.knc(w.read(), []op{set("Ready", "True", "Ready", ""), set("Addressable", "True", "Addressable", "at a")},
			func(s *cluster.LiveStatus) { s.Address = &cluster.Addressable{URL: "http://a.example/"} })
		w.knc(w.read(), []op{set("Ready", "True", "Ready", ""), set("Addressable", "True", "Addressable", "at a")}, nil)
		w.foreign(true, bumpSpec)
		w.knc(w.read(), []op{set("Ready", "True", "Ready", ""), set("Addressable", "True", "Addressable", "at a")}, nil)
		w.knc(w.read(), []op{set("Ready", "False", "NotReady", "down")}, nil)
	}},
	{"a stale read while another writer changes its own condition", func(w *world) {
		stale := w.read()
		w.foreign(false, func(o map[string]any) { setCondition(o, "Foreign", "False", "Changed") })
		w.knc(stale, []op{set("Ready", "False", "NotReady", "")}, nil)
	}},
	{"a stale read across a new generation while another writer changes its own condition", func(w *world) {
		w.knc(w.read(), []op{set("Ready", "True", "Ready", "")}, nil)
		w.foreign(true, bumpSpec)
		stale := w.read()
		w.foreign(false, func(o map[string]any) { setCondition(o, "Foreign", "False", "Changed") })
		w.knc(stale, []op{set("Ready", "True", "Ready", "")}, nil)
		w.knc(w.read(), []op{set("Ready", "True", "Ready", "")}, nil)
	}},
	{"another writer changes an owned condition", func(w *world) {
		w.knc(w.read(), []op{set("Ready", "True", "Ready", "")}, nil)
		stale := w.read()
		w.foreign(false, func(o map[string]any) { setCondition(o, "Ready", "Unknown", "Theirs") })
		w.knc(stale, []op{set("Ready", "False", "Ours", "")}, nil)
		w.foreign(false, func(o map[string]any) { setCondition(o, "Ready", "Unknown", "Theirs") })
		w.knc(w.read(), []op{set("Ready", "False", "Ours", "")}, nil)
	}},
	{"an owned condition removed while another writer changes it", func(w *world) {
		w.knc(w.read(), []op{set("Ready", "True", "Ready", ""), set("Addressable", "True", "Addressable", "")}, nil)
		stale := w.read()
		w.foreign(false, func(o map[string]any) { setCondition(o, "Addressable", "False", "Theirs") })
		w.knc(stale, []op{del("Addressable")}, nil)
	}},
	{"a foreign condition removed while another writer changes it", func(w *world) {
		stale := w.read()
		w.foreign(false, func(o map[string]any) { setCondition(o, "Foreign", "Unknown", "Again") })
		w.knc(stale, []op{del("Foreign")}, nil)
		w.knc(w.read(), []op{del("Foreign")}, nil)
	}},
	{"a conflict between the read and the patch is retried", func(w *world) {
		w.knc(w.read(), []op{set("Ready", "True", "Ready", "")}, nil)
		w.hooks = []func(){func() {
			w.foreign(false, func(o map[string]any) { setCondition(o, "Other", "True", "Added") })
		}}
		w.knc(w.read(), []op{set("Ready", "False", "NotReady", "")}, nil)
	}},
	{"conflicts until the retries run out", func(w *world) {
		n := 0
		for range 6 {
			w.hooks = append(w.hooks, func() {
				n++
				w.foreign(false, func(o map[string]any) { setCondition(o, "Other", "True", fmt.Sprint("Added", n)) })
			})
		}
		w.knc(w.read(), []op{set("Ready", "False", "NotReady", "")}, nil)
		w.hooks = nil
	}},
	{"status fields: another writer's kept, knc's written and removed", func(w *world) {
		w.knc(w.read(), []op{set("Ready", "True", "Ready", "")}, func(s *cluster.LiveStatus) {
			s.Address = &cluster.Addressable{URL: "http://a.example/"}
			s.Subscribers = []status.SubscriberStatus{{UID: "u1", ObservedGeneration: 1, Ready: "True"}}
		})
		stale := w.read()
		w.foreign(false, func(o map[string]any) {
			_ = unstructured.SetNestedField(o, "http://theirs.example/", "status", "sinkUri")
			_ = unstructured.SetNestedField(o, "http://b.example/", "status", "address", "url")
		})
		w.knc(stale, nil, func(s *cluster.LiveStatus) { s.Subscribers = nil })
		stale = w.read()
		w.foreign(false, func(o map[string]any) { _ = unstructured.SetNestedField(o, "theirs", "status", "other") })
		w.knc(stale, []op{set("Ready", "False", "NotReady", "")}, func(s *cluster.LiveStatus) { s.Address = nil })
	}},
}

// TestPatchAsFlux runs each scenario on two objects of a real API
// server, one written through Flux's conditions and patch helper over
// controller-runtime's client, the other through this package over the
// dynamic client, and compares the objects after every step: the status,
// the generation, the field managers and whether each write failed.
// Times stamped during the run are compared as such.
func TestPatchAsFlux(t *testing.T) {
	env := kubetest.Current(t)
	install, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := env.InstallCRDYAML(install, thingCRD); err != nil { // creates or updates
		t.Fatal(err)
	}
	cfg := env.Config()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	scheme := runtime.NewScheme()
	scheme.AddKnownTypeWithName(thingKind, &cluster.LiveObject{})
	metav1.AddToGroupVersion(scheme, thingKind.GroupVersion())
	cr, err := client.New(cfg, client.Options{Scheme: scheme})
	if err != nil {
		t.Fatal(err)
	}
	ns := env.Namespace(t)
	for i, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			run := func(name string, wr writer) *world {
				w := &world{t: t, ctx: ctx, dyn: dyn, ns: ns, name: fmt.Sprintf("%s-%d", name, i), writer: wr, start: time.Now()}
				create(t, w)
				sc.run(w)
				return w
			}
			want := run("flux", flux{cr})
			got := run("ours", ours{dyn})
			if diff := cmp.Diff(want.errs, got.errs); diff != "" {
				t.Errorf("which writes failed (-flux +statuspatch):\n%s", diff)
			}
			if diff := cmp.Diff(want.states, got.states); diff != "" {
				t.Errorf("the object after each step (-flux +statuspatch):\n%s", diff)
			}
		})
	}
}

// create makes w's object with a spec and the status another writer gave
// it: its own condition and a Ready of its own.
func create(t *testing.T, w *world) {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": thingKind.GroupVersion().String(), "kind": thingKind.Kind,
		"metadata": map[string]any{"name": w.name, "namespace": w.ns},
		"spec":     map[string]any{"n": int64(1)},
	}}
	created, err := w.resource().Create(w.ctx, u, metav1.CreateOptions{FieldManager: "other"})
	if err != nil {
		t.Fatal(err)
	}
	setCondition(created.Object, "Foreign", "True", "Theirs")
	setCondition(created.Object, "Ready", "Unknown", "Initializing")
	if _, err := w.resource().UpdateStatus(w.ctx, created, metav1.UpdateOptions{FieldManager: "other"}); err != nil {
		t.Fatal(err)
	}
	w.record()
}
