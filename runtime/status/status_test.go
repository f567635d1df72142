package status

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/resolve"
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
			Source: routing.Source{Namespace: "ns", Name: "b", Generation: 3},
			Path:   "/brokers/ns/b",
			Triggers: []routing.Trigger{{
				Source:     routing.Source{Namespace: "ns", Name: "t"},
				Subscriber: routing.Destination{URI: "http://sub.example/"},
				Delivery:   &routing.Delivery{DeadLetterSink: &routing.Destination{URI: "http://dls.example/"}},
			}},
		}},
		Channels: []routing.Channel{{
			Source: routing.Source{Namespace: "ns", Name: "c"},
			Path:   "/channels/ns/c",
			Subscriptions: []routing.Subscription{{
				Source:     routing.Source{Namespace: "ns", Name: "s"},
				Subscriber: &routing.Destination{URI: "http://sub.example/"},
				Reply:      &routing.Destination{URI: "http://reply.example/"},
			}},
		}},
	}
}

// site is a reference of the test table's Trigger t or Subscription s.
func site(kind, name, field string) resolve.Site {
	return resolve.Site{Kind: kind, Namespace: "ns", Name: name, Field: field}
}

// resolved resolves every reference of the test table but those given.
func resolved(unresolved ...resolve.Site) resolve.Results {
	r := resolve.Results{
		site("Trigger", "t", "subscriber"):      {URL: "http://sub.example/"},
		site("Trigger", "t", "deadLetterSink"):  {URL: "http://dls.example/"},
		site("Subscription", "s", "subscriber"): {URL: "http://sub.example/"},
		site("Subscription", "s", "reply"):      {URL: "http://reply.example/"},
	}
	for _, site := range unresolved {
		r[site] = resolve.Result{Err: errors.New("not found")}
	}
	return r
}

func allIngressReady(string, routing.Source) Ingress { return Ingress{Ready: true} }

// trueSince0 is a condition that has been True since stamp0.
func trueSince0(typ, reason, message string) Condition {
	return Condition{Type: typ, Status: "True", Reason: reason, Message: message, LastTransitionTime: stamp0}
}

// object is the status object of one of the test table's objects.
func object(apiVersion, kind, name string, status Status) Report {
	return Report{APIVersion: apiVersion, Kind: kind, Metadata: Metadata{Namespace: "ns", Name: name}, Status: status}
}

func TestComputeAllReady(t *testing.T) {
	got := Compute(Input{
		Table:    testTable(),
		BaseURL:  "http://127.0.0.1:8080",
		Resolved: resolved(),
		Ingress:  allIngressReady,
		Now:      t0,
	})
	want := []Report{
		object("eventing.knative.dev/v1", "Broker", "b", Status{
			ObservedGeneration: 3,
			Address:            &Addressable{URL: "http://127.0.0.1:8080/brokers/ns/b"},
			Conditions: []Condition{
				trueSince0("Ready", "Ready", "broker is ready"),
				trueSince0("Addressable", "AddressSet", "http://127.0.0.1:8080/brokers/ns/b"),
				trueSince0("IngressReady", "IngressReady", "events sent to the address are stored and routed"),
			},
		}),
		object("eventing.knative.dev/v1", "Trigger", "t", Status{
			ObservedGeneration: 1,
			SubscriberURI:      "http://sub.example/",
			DeadLetterSinkURI:  "http://dls.example/",
			Conditions: []Condition{
				trueSince0("Ready", "Ready", "trigger is ready"),
				trueSince0("BrokerReady", "BrokerReady", "broker ns/b is ready"),
				trueSince0("SubscriberResolved", "Resolved", "http://sub.example/"),
				trueSince0("DeadLetterSinkResolved", "Resolved", "http://dls.example/"),
			},
		}),
		object("messaging.knative.dev/v1", "Channel", "c", Status{
			ObservedGeneration: 1,
			Address:            &Addressable{URL: "http://127.0.0.1:8080/channels/ns/c"},
			Subscribers:        []SubscriberStatus{{ObservedGeneration: 1, Ready: "True", Message: "the channel delivers to this subscription"}},
			Conditions: []Condition{
				trueSince0("Ready", "Ready", "channel is ready"),
				trueSince0("Addressable", "AddressSet", "http://127.0.0.1:8080/channels/ns/c"),
				trueSince0("IngressReady", "IngressReady", "events sent to the address are stored and routed"),
				trueSince0("SubscribersReady", "SubscribersReady", "1 of 1 subscriptions are ready"),
			},
		}),
		object("messaging.knative.dev/v1", "Subscription", "s", Status{
			ObservedGeneration:   1,
			PhysicalSubscription: &PhysicalSubscription{SubscriberURI: "http://sub.example/", ReplyURI: "http://reply.example/"},
			Conditions: []Condition{
				trueSince0("Ready", "Ready", "subscription is ready"),
				trueSince0("ReferencesResolved", "Resolved", "subscriber, reply and dead-letter sink are resolved"),
				trueSince0("ChannelReady", "ChannelReady", "channel ns/c is ready"),
			},
		}),
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Compute (-want +got):\n%s", d)
	}
}

// readiness maps "Kind/name" to the Ready status and reason.
type readiness map[string]string

// readyOf is the readiness of the test table's objects.
func readyOf(broker, trigger, channel, subscription string) readiness {
	return readiness{"Broker/b": broker, "Trigger/t": trigger, "Channel/c": channel, "Subscription/s": subscription}
}

// TestComputeReady checks how each problem reaches the Ready conditions.
func TestComputeReady(t *testing.T) {
	tests := []struct {
		name       string
		unresolved []resolve.Site
		ingress    func(string, routing.Source) Ingress
		want       readiness
	}{{
		name:    "not set up yet",
		ingress: nil,
		want:    readyOf("Unknown Provisioning", "Unknown BrokerProvisioning", "Unknown Provisioning", "Unknown ChannelProvisioning"),
	}, {
		name:    "ingress failed",
		ingress: func(string, routing.Source) Ingress { return Ingress{Reason: "StreamUnavailable", Message: "no space"} },
		want:    readyOf("False StreamUnavailable", "False BrokerNotReady", "False StreamUnavailable", "False ChannelNotReady"),
	}, {
		name:       "trigger subscriber unresolved",
		unresolved: []resolve.Site{site("Trigger", "t", "subscriber")},
		ingress:    allIngressReady,
		want:       readyOf("True Ready", "False Unresolved", "True Ready", "True Ready"),
	}, {
		name:       "trigger dead-letter sink unresolved",
		unresolved: []resolve.Site{site("Trigger", "t", "deadLetterSink")},
		ingress:    allIngressReady,
		want:       readyOf("True Ready", "False Unresolved", "True Ready", "True Ready"),
	}, {
		name:       "subscription reply unresolved",
		unresolved: []resolve.Site{site("Subscription", "s", "reply")},
		ingress:    allIngressReady,
		want:       readyOf("True Ready", "True Ready", "False SubscribersNotReady", "False Unresolved"),
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

func TestPingSourceStatus(t *testing.T) {
	toBroker := routing.PingSource{Source: routing.Source{Namespace: "ns", Name: "to-broker", Generation: 2}, Schedule: "* * * * *",
		Sink: routing.Destination{URI: "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b"}, SinkPath: "/brokers/ns/b"}
	toService := routing.PingSource{Source: routing.Source{Namespace: "ns", Name: "to-service"}, Schedule: "0 * * * *", Timezone: "Europe/Paris",
		Sink: routing.Destination{Ref: &routing.Ref{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "svc"}}}
	attrs := func(name string) []CloudEventAttributes {
		return []CloudEventAttributes{{Type: "dev.knative.sources.ping", Source: "/apis/v1/namespaces/ns/pingsources/" + name}}
	}
	tests := []struct {
		name     string
		ps       routing.PingSource
		resolved resolve.Results
		ping     Ingress
		want     Status
	}{
		{"broker sink, fired", toBroker, nil, Ingress{Ready: true}, Status{
			ObservedGeneration: 2, SinkURI: "http://127.0.0.1:8080/brokers/ns/b", CloudEventAttributes: attrs("to-broker"),
			Conditions: []Condition{
				{Type: "Ready", Status: "True", Reason: "Ready", Message: "pingsource is ready", LastTransitionTime: stamp0},
				{Type: "SinkProvided", Status: "True", Reason: "SinkProvided", Message: "http://127.0.0.1:8080/brokers/ns/b", LastTransitionTime: stamp0},
				{Type: "Deployed", Status: "True", Reason: "Deployed", Message: `the runtime fires it on schedule "* * * * *" in time zone UTC`, LastTransitionTime: stamp0},
			}}},
		{"sink not found", toService, resolve.Results{site("PingSource", "to-service", "sink"): {Err: errors.New("Service ns/svc: not addressable")}}, Ingress{Ready: true}, Status{
			ObservedGeneration: 1, CloudEventAttributes: attrs("to-service"),
			Conditions: []Condition{
				{Type: "Ready", Status: "False", Reason: "NotFound", Message: "sink not found: Service ns/svc: not addressable", LastTransitionTime: stamp0},
				{Type: "SinkProvided", Status: "False", Reason: "NotFound", Message: "sink not found: Service ns/svc: not addressable", LastTransitionTime: stamp0},
				{Type: "Deployed", Status: "True", Reason: "Deployed", Message: `the runtime fires it on schedule "0 * * * *" in time zone Europe/Paris`, LastTransitionTime: stamp0},
			}}},
		{"not fired yet", toService, resolve.Results{site("PingSource", "to-service", "sink"): {URL: "http://svc.ns.svc.cluster.local/"}}, Ingress{}, Status{
			ObservedGeneration: 1, SinkURI: "http://svc.ns.svc.cluster.local/", CloudEventAttributes: attrs("to-service"),
			Conditions: []Condition{
				{Type: "Ready", Status: "Unknown", Reason: "Provisioning", Message: "the runtime is not firing it yet", LastTransitionTime: stamp0},
				{Type: "SinkProvided", Status: "True", Reason: "SinkProvided", Message: "http://svc.ns.svc.cluster.local/", LastTransitionTime: stamp0},
				{Type: "Deployed", Status: "Unknown", Reason: "Provisioning", Message: "the runtime is not firing it yet", LastTransitionTime: stamp0},
			}}},
		{"invalid schedule", toBroker, nil, Ingress{Reason: "InvalidSchedule", Message: "bad zone"}, Status{
			ObservedGeneration: 2, SinkURI: "http://127.0.0.1:8080/brokers/ns/b", CloudEventAttributes: attrs("to-broker"),
			Conditions: []Condition{
				{Type: "Ready", Status: "False", Reason: "InvalidSchedule", Message: "bad zone", LastTransitionTime: stamp0},
				{Type: "SinkProvided", Status: "True", Reason: "SinkProvided", Message: "http://127.0.0.1:8080/brokers/ns/b", LastTransitionTime: stamp0},
				{Type: "Deployed", Status: "False", Reason: "InvalidSchedule", Message: "bad zone", LastTransitionTime: stamp0},
			}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := Compute(Input{
				Table:    &routing.Table{PingSources: []routing.PingSource{tt.ps}},
				BaseURL:  "http://127.0.0.1:8080",
				Resolved: tt.resolved,
				Ping:     func(routing.Source) Ingress { return tt.ping },
				Now:      t0,
			})
			if len(out) != 1 || out[0].Kind != "PingSource" || out[0].APIVersion != "sources.knative.dev/v1" {
				t.Fatalf("Compute = %+v; want one PingSource", out)
			}
			if d := cmp.Diff(tt.want, out[0].Status); d != "" {
				t.Errorf("status (-want +got):\n%s", d)
			}
		})
	}
}

// flowTable is a Sequence of two steps and a Parallel of one branch, with
// the Channels and Subscriptions they were compiled into; every
// subscriber is a URI, so nothing needs resolving.
func flowTable() *routing.Table {
	sub := func(name string) routing.Subscription {
		return routing.Subscription{Source: routing.Source{Namespace: "ns", Name: name}, Subscriber: &routing.Destination{URI: "http://sub.example/"}}
	}
	ch := func(name string, subs ...routing.Subscription) routing.Channel {
		return routing.Channel{Source: routing.Source{Namespace: "ns", Name: name}, Path: "/channels/ns/" + name, Subscriptions: subs}
	}
	return &routing.Table{
		Channels: []routing.Channel{
			ch("p-kn-parallel", sub("p-kn-parallel-filter-0")),
			ch("p-kn-parallel-0", sub("p-kn-parallel-0")),
			ch("s-kn-sequence-0", sub("s-kn-sequence-0")),
			ch("s-kn-sequence-1", sub("s-kn-sequence-1")),
		},
		Sequences: []routing.Sequence{{Source: routing.Source{Namespace: "ns", Name: "s"},
			Channels: []string{"s-kn-sequence-0", "s-kn-sequence-1"}, Subscriptions: []string{"s-kn-sequence-0", "s-kn-sequence-1"}}},
		Parallels: []routing.Parallel{{Source: routing.Source{Namespace: "ns", Name: "p"}, Channel: "p-kn-parallel",
			Branches: []routing.Branch{{Channel: "p-kn-parallel-0", FilterSubscription: "p-kn-parallel-filter-0", Subscription: "p-kn-parallel-0"}}}},
	}
}

// A Sequence's and a Parallel's status sum up their parts' as Knative's
// flows do: the address of the ingress Channel, ChannelsReady and
// SubscriptionsReady, and each part's Ready condition. While one Channel
// is still being set up, the flow is not ready, and says which.
func TestFlows(t *testing.T) {
	provisioning := "s-kn-sequence-1"
	in := Input{Table: flowTable(), BaseURL: "http://127.0.0.1:8080", Now: t0, Ingress: func(_ string, o routing.Source) Ingress {
		return Ingress{Ready: o.Name != provisioning}
	}}
	objs := Compute(in)
	seq := Find(objs, "Sequence", "ns", "s")
	if seq == nil {
		t.Fatalf("no Sequence reported among %d objects", len(objs))
	}
	if seq.APIVersion != "flows.knative.dev/v1" {
		t.Errorf("Sequence apiVersion %q", seq.APIVersion)
	}
	if seq.Status.Address == nil || seq.Status.Address.URL != "http://127.0.0.1:8080/channels/ns/s-kn-sequence-0" {
		t.Errorf("Sequence address %+v, want its first Channel's", seq.Status.Address)
	}
	want := map[string]string{"Ready": Unknown, "ChannelsReady": Unknown, "SubscriptionsReady": Unknown, "Addressable": True}
	got := map[string]string{}
	for _, c := range seq.Status.Conditions {
		got[c.Type] = c.Status
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Sequence conditions while a Channel is provisioning (-want +got):\n%s", diff)
	}
	if r := seq.ConditionOf(ConditionChannelsReady); r == nil || r.Reason != "ChannelsNotReady" || r.Message != "1 of 2 channels are not ready: channel s-kn-sequence-1: the streams and consumers are being set up" {
		t.Errorf("ChannelsReady = %+v", r)
	}
	wantChannels := []ChannelStatus{
		{Channel: ObjectReference{APIVersion: "messaging.knative.dev/v1", Kind: "Channel", Namespace: "ns", Name: "s-kn-sequence-0"}, Ready: ready(Find(objs, "Channel", "ns", "s-kn-sequence-0").Status.Conditions)},
		{Channel: ObjectReference{APIVersion: "messaging.knative.dev/v1", Kind: "Channel", Namespace: "ns", Name: "s-kn-sequence-1"}, Ready: ready(Find(objs, "Channel", "ns", "s-kn-sequence-1").Status.Conditions)},
	}
	if diff := cmp.Diff(wantChannels, seq.Status.ChannelStatuses); diff != "" {
		t.Errorf("channelStatuses (-want +got):\n%s", diff)
	}
	if n := len(seq.Status.SubscriptionStatuses); n != 2 || seq.Status.SubscriptionStatuses[1].Subscription.Name != "s-kn-sequence-1" {
		t.Errorf("subscriptionStatuses %+v, want one per step", seq.Status.SubscriptionStatuses)
	}

	par := Find(objs, "Parallel", "ns", "p")
	if par == nil {
		t.Fatal("no Parallel reported")
	}
	if r := par.ConditionOf(ConditionReady); r == nil || r.Status != True {
		t.Errorf("Parallel Ready = %+v, want True: all its parts are ready", r)
	}
	if par.Status.Address == nil || par.Status.Address.URL != "http://127.0.0.1:8080/channels/ns/p-kn-parallel" {
		t.Errorf("Parallel address %+v, want its ingress Channel's", par.Status.Address)
	}
	if par.Status.IngressChannelStatus == nil || par.Status.IngressChannelStatus.Channel.Name != "p-kn-parallel" || par.Status.IngressChannelStatus.Ready.Status != True {
		t.Errorf("ingressChannelStatus %+v", par.Status.IngressChannelStatus)
	}
	b := par.Status.BranchStatuses
	if len(b) != 1 || b[0].FilterSubscriptionStatus.Subscription.Name != "p-kn-parallel-filter-0" || b[0].FilterChannelStatus.Channel.Name != "p-kn-parallel-0" ||
		b[0].SubscriptionStatus.Subscription.Name != "p-kn-parallel-0" || b[0].SubscriptionStatus.Ready.Status != True {
		t.Errorf("branchStatuses %+v", b)
	}

	provisioning = ""
	in.Previous, in.Now = objs, t1
	seq = Find(Compute(in), "Sequence", "ns", "s")
	if r := seq.ConditionOf(ConditionReady); r == nil || r.Status != True || r.LastTransitionTime != stamp1 {
		t.Errorf("Sequence Ready once every Channel is = %+v, want True since %s", r, stamp1)
	}
	if r := seq.ConditionOf(ConditionAddressable); r == nil || r.LastTransitionTime != stamp0 {
		t.Errorf("Addressable = %+v, want unchanged since %s", r, stamp0)
	}
}
