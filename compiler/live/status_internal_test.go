package live

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(apiVersion, kind, name string, spec map[string]any, ready ...string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": apiVersion, "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": "shop", "creationTimestamp": "2026-01-01T00:00:00Z"},
	}}
	if spec != nil {
		u.Object["spec"] = spec
	}
	if len(ready) == 3 {
		u.Object["status"] = map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": ready[0], "reason": ready[1], "message": ready[2]}}}
	}
	return u
}

// line is one object of a status as kind/name, its ready state and its
// children, for comparing trees.
type line struct {
	Name, Ready string
	Children    []line
}

func lines(objs []Object) []line {
	var out []line
	for _, o := range objs {
		ready := o.Ready
		if o.Missing {
			ready = "Missing"
		}
		out = append(out, line{Name: o.Kind + "/" + o.Name, Ready: ready, Children: lines(o.Children)})
	}
	return out
}

func TestBuildStatusTree(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("eventing.knative.dev/v1", "Trigger", "orders", map[string]any{"broker": "default"}, "True", "Ready", ""),
		obj("eventing.knative.dev/v1", "Trigger", "stray", map[string]any{"broker": "gone"}, "False", "BrokerDoesNotExist", "broker shop/gone does not exist"),
		obj("sources.knative.dev/v1", "PingSource", "tick", nil, "True", "Ready", ""),
		obj("messaging.knative.dev/v1", "Subscription", "mail", map[string]any{"channel": map[string]any{"apiVersion": "messaging.knative.dev/v1", "kind": "Channel", "name": "notes"}}),
		obj("messaging.knative.dev/v1", "Channel", "notes", nil, "True", "Ready", ""),
		obj("eventing.knative.dev/v1", "Broker", "default", nil, "True", "Ready", ""),
		obj("flows.knative.dev/v1", "Sequence", "steps", nil, "Unknown", "NotReconciled", ""),
	}
	st := BuildStatus(objs, Scope{Namespaces: []string{"shop"}})
	want := []line{
		{Name: "Broker/default", Ready: "True", Children: []line{{Name: "Trigger/orders", Ready: "True"}}},
		// Its Broker does not exist: a root of its own.
		{Name: "Trigger/stray", Ready: "False"},
		{Name: "Channel/notes", Ready: "True", Children: []line{{Name: "Subscription/mail", Ready: ""}}},
		{Name: "Sequence/steps", Ready: "Unknown"},
		{Name: "PingSource/tick", Ready: "True"},
	}
	if diff := cmp.Diff(want, lines(st.Objects)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if st.Ready || st.NotReady != 3 || st.Total != 7 {
		t.Errorf("Ready %v, NotReady %d, Total %d; want false, 3 (stray, mail, steps), 7", st.Ready, st.NotReady, st.Total)
	}

	var b strings.Builder
	if err := st.WriteText(&b, time.Date(2026, 1, 1, 0, 5, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	wantText := `NAMESPACE  NAME                  READY    REASON              AGE  ADDRESS OR MESSAGE
shop       Broker/default        True     Ready               5m
shop       └─ Trigger/orders     True     Ready               5m
shop       Trigger/stray         False    BrokerDoesNotExist  5m   broker shop/gone does not exist
shop       Channel/notes         True     Ready               5m
shop       └─ Subscription/mail  -        -                   5m   no Ready condition yet: is the runtime of this namespace running?
shop       Sequence/steps        Unknown  NotReconciled       5m
shop       PingSource/tick       True     Ready               5m

3 of 7 not ready.
`
	if diff := cmp.Diff(wantText, b.String()); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// TestBuildStatusOfABuild limits the status to the objects of a build: the
// others of the namespace are left out, and one the cluster lacks is
// Missing.
func TestBuildStatusOfABuild(t *testing.T) {
	objs := []*unstructured.Unstructured{
		obj("eventing.knative.dev/v1", "Broker", "default", nil, "True", "Ready", ""),
		obj("eventing.knative.dev/v1", "Trigger", "someone-elses", map[string]any{"broker": "default"}, "True", "Ready", ""),
	}
	orders := Ref{Group: "eventing.knative.dev", Kind: "Trigger", Namespace: "shop", Name: "orders"}
	st := BuildStatus(objs, Scope{
		Objects: []Ref{{Group: "eventing.knative.dev", Kind: "Broker", Namespace: "shop", Name: "default"}, orders},
		parents: map[Ref]parent{orders: {"Broker", "default"}},
	})
	want := []line{{Name: "Broker/default", Ready: "True", Children: []line{{Name: "Trigger/orders", Ready: "Missing"}}}}
	if diff := cmp.Diff(want, lines(st.Objects)); diff != "" {
		t.Errorf("tree (-want +got):\n%s", diff)
	}
	if st.Ready {
		t.Error("Ready with an object missing")
	}
}
