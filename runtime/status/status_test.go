package status

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/routing"
)

var (
	t0 = time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)
	t1 = t0.Add(time.Minute)
)

const (
	stamp0 = "2026-01-02T03:04:05Z"
	stamp1 = "2026-01-02T03:05:05Z"
)

func testTable() *routing.Table {
	return &routing.Table{
		Brokers: []routing.Broker{{
			Object: routing.Object{Namespace: "ns", Name: "b", Generation: 3},
			Path:   "/brokers/ns/b",
			Triggers: []routing.Trigger{{
				Object:     routing.Object{Namespace: "ns", Name: "t"},
				Subscriber: routing.Destination{URI: "http://sub.example/"},
				Delivery:   &routing.Delivery{DeadLetterSink: &routing.Destination{URI: "http://dls.example/"}},
			}},
		}},
		Channels: []routing.Channel{{
			Object: routing.Object{Namespace: "ns", Name: "c"},
			Path:   "/channels/ns/c",
			Subscriptions: []routing.Subscription{{
				Object:     routing.Object{Namespace: "ns", Name: "s"},
				Subscriber: &routing.Destination{URI: "http://sub.example/"},
				Reply:      &routing.Destination{URI: "http://reply.example/"},
			}},
		}},
	}
}

func resolved(unresolved ...resolve.Site) resolve.Results {
	r := resolve.Results{
		{Kind: "Trigger", Namespace: "ns", Name: "t", Field: "subscriber"}:      {URL: "http://sub.example/"},
		{Kind: "Trigger", Namespace: "ns", Name: "t", Field: "deadLetterSink"}:  {URL: "http://dls.example/"},
		{Kind: "Subscription", Namespace: "ns", Name: "s", Field: "subscriber"}: {URL: "http://sub.example/"},
		{Kind: "Subscription", Namespace: "ns", Name: "s", Field: "reply"}:      {URL: "http://reply.example/"},
	}
	for _, site := range unresolved {
		r[site] = resolve.Result{Err: errors.New("not found")}
	}
	return r
}

func allIngressReady(string, routing.Object) Ingress { return Ingress{Ready: true} }

func cond(typ, status, reason, message, stamp string) Condition {
	return Condition{Type: typ, Status: status, Reason: reason, Message: message, LastTransitionTime: stamp}
}

func TestComputeAllReady(t *testing.T) {
	got := Compute(Input{
		Table:    testTable(),
		BaseURL:  "http://127.0.0.1:8080",
		Resolved: resolved(),
		Ingress:  allIngressReady,
		Now:      t0,
	})
	want := []Object{{
		APIVersion: "eventing.knative.dev/v1", Kind: "Broker", Metadata: Metadata{Namespace: "ns", Name: "b"},
		Status: Status{
			ObservedGeneration: 3,
			Address:            &Addressable{URL: "http://127.0.0.1:8080/brokers/ns/b"},
			Conditions: []Condition{
				cond("Ready", "True", "Ready", "broker is ready", stamp0),
				cond("Addressable", "True", "AddressSet", "http://127.0.0.1:8080/brokers/ns/b", stamp0),
				cond("IngressReady", "True", "IngressReady", "events sent to the address are stored and routed", stamp0),
			},
		},
	}, {
		APIVersion: "eventing.knative.dev/v1", Kind: "Trigger", Metadata: Metadata{Namespace: "ns", Name: "t"},
		Status: Status{
			ObservedGeneration: 1,
			SubscriberURI:      "http://sub.example/",
			DeadLetterSinkURI:  "http://dls.example/",
			Conditions: []Condition{
				cond("Ready", "True", "Ready", "trigger is ready", stamp0),
				cond("BrokerReady", "True", "BrokerReady", "broker ns/b is ready", stamp0),
				cond("SubscriberResolved", "True", "Resolved", "http://sub.example/", stamp0),
				cond("DeadLetterSinkResolved", "True", "Resolved", "http://dls.example/", stamp0),
			},
		},
	}, {
		APIVersion: "messaging.knative.dev/v1", Kind: "Channel", Metadata: Metadata{Namespace: "ns", Name: "c"},
		Status: Status{
			ObservedGeneration: 1,
			Address:            &Addressable{URL: "http://127.0.0.1:8080/channels/ns/c"},
			Subscribers:        []SubscriberStatus{{ObservedGeneration: 1, Ready: "True", Message: "the channel delivers to this subscription"}},
			Conditions: []Condition{
				cond("Ready", "True", "Ready", "channel is ready", stamp0),
				cond("Addressable", "True", "AddressSet", "http://127.0.0.1:8080/channels/ns/c", stamp0),
				cond("IngressReady", "True", "IngressReady", "events sent to the address are stored and routed", stamp0),
				cond("SubscribersReady", "True", "SubscribersReady", "1 of 1 subscriptions are ready", stamp0),
			},
		},
	}, {
		APIVersion: "messaging.knative.dev/v1", Kind: "Subscription", Metadata: Metadata{Namespace: "ns", Name: "s"},
		Status: Status{
			ObservedGeneration:   1,
			PhysicalSubscription: &PhysicalSubscription{SubscriberURI: "http://sub.example/", ReplyURI: "http://reply.example/"},
			Conditions: []Condition{
				cond("Ready", "True", "Ready", "subscription is ready", stamp0),
				cond("ReferencesResolved", "True", "Resolved", "subscriber, reply and dead-letter sink are resolved", stamp0),
				cond("ChannelReady", "True", "ChannelReady", "channel ns/c is ready", stamp0),
			},
		},
	}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Compute (-want +got):\n%s", d)
	}
}

// TestComputeReady checks how each problem reaches the Ready conditions.
func TestComputeReady(t *testing.T) {
	type readiness map[string]string // "Kind/name" → Ready status and reason
	tests := []struct {
		name       string
		unresolved []resolve.Site
		ingress    func(string, routing.Object) Ingress
		want       readiness
	}{{
		name:    "not set up yet",
		ingress: nil,
		want: readiness{
			"Broker/b": "Unknown Provisioning", "Trigger/t": "Unknown BrokerProvisioning",
			"Channel/c": "Unknown Provisioning", "Subscription/s": "Unknown ChannelProvisioning",
		},
	}, {
		name:    "ingress failed",
		ingress: func(string, routing.Object) Ingress { return Ingress{Reason: "StreamUnavailable", Message: "no space"} },
		want: readiness{
			"Broker/b": "False StreamUnavailable", "Trigger/t": "False BrokerNotReady",
			"Channel/c": "False StreamUnavailable", "Subscription/s": "False ChannelNotReady",
		},
	}, {
		name:       "trigger subscriber unresolved",
		unresolved: []resolve.Site{{Kind: "Trigger", Namespace: "ns", Name: "t", Field: "subscriber"}},
		ingress:    allIngressReady,
		want: readiness{
			"Broker/b": "True Ready", "Trigger/t": "False Unresolved",
			"Channel/c": "True Ready", "Subscription/s": "True Ready",
		},
	}, {
		name:       "trigger dead-letter sink unresolved",
		unresolved: []resolve.Site{{Kind: "Trigger", Namespace: "ns", Name: "t", Field: "deadLetterSink"}},
		ingress:    allIngressReady,
		want: readiness{
			"Broker/b": "True Ready", "Trigger/t": "False Unresolved",
			"Channel/c": "True Ready", "Subscription/s": "True Ready",
		},
	}, {
		name:       "subscription reply unresolved",
		unresolved: []resolve.Site{{Kind: "Subscription", Namespace: "ns", Name: "s", Field: "reply"}},
		ingress:    allIngressReady,
		want: readiness{
			"Broker/b": "True Ready", "Trigger/t": "True Ready",
			"Channel/c": "False SubscribersNotReady", "Subscription/s": "False Unresolved",
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := Compute(Input{Table: testTable(), BaseURL: "http://h", Resolved: resolved(tt.unresolved...), Ingress: tt.ingress, Now: t0})
			got := readiness{}
			for _, o := range objs {
				r := o.ConditionOf("Ready")
				got[o.Kind+"/"+o.Metadata.Name] = r.Status + " " + r.Reason
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Ready (-want +got):\n%s", d)
			}
		})
	}
}

func TestLastTransitionTimeChangesOnlyWithStatus(t *testing.T) {
	first := Compute(Input{Table: testTable(), BaseURL: "http://h", Resolved: resolved(), Now: t0})
	second := Compute(Input{Table: testTable(), BaseURL: "http://h", Resolved: resolved(), Ingress: allIngressReady, Previous: first, Now: t1})

	broker := Find(second, "Broker", "ns", "b")
	got := map[string]string{}
	for _, c := range broker.Status.Conditions {
		got[c.Type] = c.LastTransitionTime
	}
	want := map[string]string{
		"Ready":        stamp1, // Unknown → True
		"IngressReady": stamp1, // Unknown → True
		"Addressable":  stamp0, // True all along
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("broker lastTransitionTime (-want +got):\n%s", d)
	}

	trigger := Find(second, "Trigger", "ns", "t")
	if c := trigger.ConditionOf("SubscriberResolved"); c.LastTransitionTime != stamp0 {
		t.Errorf("SubscriberResolved stayed True but its lastTransitionTime moved to %s", c.LastTransitionTime)
	}
}

func TestTableAddressWithoutBaseURL(t *testing.T) {
	tbl := testTable()
	tbl.Brokers[0].Address = "http://broker-ingress.knative-eventing.svc.cluster.local/ns/b"
	tbl.Channels[0].Address = ""
	objs := Compute(Input{Table: tbl, Resolved: resolved(), Ingress: allIngressReady, Now: t0})
	if got := Find(objs, "Broker", "ns", "b").Status.Address; got == nil || got.URL != tbl.Brokers[0].Address {
		t.Errorf("broker address = %+v, want the table's", got)
	}
	ch := Find(objs, "Channel", "ns", "c")
	if c := ch.ConditionOf("Addressable"); c.Status != "False" || ch.Status.Address != nil {
		t.Errorf("channel without any address: Addressable %+v, address %+v; want False and none", c, ch.Status.Address)
	}
}
