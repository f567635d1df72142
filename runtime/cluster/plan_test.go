package cluster

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/status"
)

const ns = "shop"

func liveObject(t testing.TB, kind, name string, generation int64, spec string, annotations map[string]string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{Object: map[string]any{"spec": parseSpec(t, spec)}}
	u.SetKind(kind)
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetGeneration(generation)
	u.SetUID(types.UID("uid-" + name))
	u.SetAnnotations(annotations)
	return u
}

func hashOf(t testing.TB, kind, spec string) string {
	t.Helper()
	h, err := SpecHash(kind, parseSpec(t, spec))
	if err != nil {
		t.Fatal(err)
	}
	return h
}

const (
	brokerSpec  = `{"config":{}}`
	triggerSpec = `{"broker":"default","subscriber":{"uri":"http://a/"}}`
	channelSpec = `{"channelTemplate":{"apiVersion":"messaging.knc.dev/v1alpha1","kind":"JetStreamChannel"}}`
	subSpec     = `{"channel":{"apiVersion":"messaging.knative.dev/v1","kind":"Channel","name":"orders","namespace":"shop"},"subscriber":{"uri":"http://s/"}}`
)

// testTable is a Broker with one Trigger and a Channel with one
// Subscription, with the spec hashes of the specs above.
func testTable(t testing.TB) *routing.Table {
	// The compiler hashes a knc Broker before it adds config: {}.
	return &routing.Table{
		Brokers: []routing.Broker{{
			Source:  routing.Source{Namespace: ns, Name: "default", SpecHash: hashOf(t, "Broker", `{}`)},
			Path:    "/brokers/shop/default",
			Address: "http://knc-ingress.shop.svc.cluster.local/brokers/shop/default",
			Triggers: []routing.Trigger{{
				Source:     routing.Source{Namespace: ns, Name: "t1", SpecHash: hashOf(t, "Trigger", triggerSpec)},
				Subscriber: routing.Destination{URI: "http://a/"},
			}},
		}},
		Channels: []routing.Channel{{
			Source:  routing.Source{Namespace: ns, Name: "orders", SpecHash: hashOf(t, "Channel", channelSpec)},
			Path:    "/channels/shop/orders",
			Address: "http://knc-ingress.shop.svc.cluster.local/channels/shop/orders",
			Subscriptions: []routing.Subscription{{
				Source:     routing.Source{Namespace: ns, Name: "s1", SpecHash: hashOf(t, "Subscription", subSpec)},
				Subscriber: &routing.Destination{URI: "http://s/"},
			}},
		}},
	}
}

func computeFor(table *routing.Table) []status.Report {
	return status.Compute(status.Input{
		Table: table,
		Resolved: resolve.Results{
			{Kind: knative.KindTrigger, Namespace: ns, Name: "t1", Field: resolve.FieldSubscriber}:      {URL: "http://a/"},
			{Kind: knative.KindSubscription, Namespace: ns, Name: "s1", Field: resolve.FieldSubscriber}: {URL: "http://s/"},
		},
		Ingress: func(string, routing.Source) status.Ingress { return status.Ingress{Ready: true} },
		Now:     time.Unix(0, 0),
	})
}

// summary is what a test checks of a planned status.
type summary struct {
	Kind, Name     string
	Ready, Reason  string
	Parent         string // BrokerReady or ChannelReady reason
	SubscriberUIDs []string
}

func summarize(ds []desiredStatus) []summary {
	var out []summary
	for _, d := range ds {
		s := summary{Kind: d.kind, Name: d.live.GetName()}
		for _, c := range d.status.Conditions {
			switch c.Type {
			case status.ConditionReady:
				s.Ready, s.Reason = c.Status, c.Reason
			case status.ConditionBrokerReady, status.ConditionChannelReady:
				s.Parent = c.Reason
			}
		}
		for _, sub := range d.status.Subscribers {
			s.SubscriberUIDs = append(s.SubscriberUIDs, sub.UID+"/"+sub.Ready)
		}
		out = append(out, s)
	}
	return out
}

func TestPlan(t *testing.T) {
	kncBroker := map[string]string{brokerClassAnnotation: brokerClassKnc}
	all := func(t *testing.T) liveSet {
		return liveSet{
			{knative.KindBroker, ns, "default"}:  liveObject(t, "Broker", "default", 1, brokerSpec, kncBroker),
			{knative.KindTrigger, ns, "t1"}:      liveObject(t, "Trigger", "t1", 1, triggerSpec, nil),
			{knative.KindChannel, ns, "orders"}:  liveObject(t, "Channel", "orders", 1, channelSpec, nil),
			{knative.KindSubscription, ns, "s1"}: liveObject(t, "Subscription", "s1", 3, subSpec, nil),
		}
	}
	tests := []struct {
		name   string
		change func(t *testing.T, live liveSet)
		want   []summary
	}{
		{"everything compiled and live", func(*testing.T, liveSet) {}, []summary{
			{Kind: "Broker", Name: "default", Ready: "True", Reason: "Ready"},
			{Kind: "Trigger", Name: "t1", Ready: "True", Reason: "Ready", Parent: "BrokerReady"},
			{Kind: "Channel", Name: "orders", Ready: "True", Reason: "Ready", SubscriberUIDs: []string{"uid-s1/True"}},
			{Kind: "Subscription", Name: "s1", Ready: "True", Reason: "Ready", Parent: "ChannelReady"},
		}},
		{"broker edited by hand", func(t *testing.T, live liveSet) {
			live[liveKey{knative.KindBroker, ns, "default"}] = liveObject(t, "Broker", "default", 2, `{"config":{},"delivery":{"retry":9}}`, kncBroker)
		}, []summary{
			{Kind: "Broker", Name: "default", Ready: "False", Reason: ReasonNotCompiled},
			{Kind: "Trigger", Name: "t1", Ready: "False", Reason: "BrokerNotReady", Parent: "BrokerNotReady"},
			{Kind: "Channel", Name: "orders", Ready: "True", Reason: "Ready", SubscriberUIDs: []string{"uid-s1/True"}},
			{Kind: "Subscription", Name: "s1", Ready: "True", Reason: "Ready", Parent: "ChannelReady"},
		}},
		{"broker deleted", func(_ *testing.T, live liveSet) {
			delete(live, liveKey{knative.KindBroker, ns, "default"})
		}, []summary{
			{Kind: "Trigger", Name: "t1", Ready: "False", Reason: ReasonBrokerDoesNotExist, Parent: ReasonBrokerDoesNotExist},
			{Kind: "Channel", Name: "orders", Ready: "True", Reason: "Ready", SubscriberUIDs: []string{"uid-s1/True"}},
			{Kind: "Subscription", Name: "s1", Ready: "True", Reason: "Ready", Parent: "ChannelReady"},
		}},
		{"subscription edited, channel deleted", func(t *testing.T, live liveSet) {
			delete(live, liveKey{knative.KindChannel, ns, "orders"})
			live[liveKey{knative.KindSubscription, ns, "s1"}] = liveObject(t, "Subscription", "s1", 4,
				`{"channel":{"apiVersion":"messaging.knative.dev/v1","kind":"Channel","name":"orders","namespace":"shop"},"subscriber":{"uri":"http://elsewhere/"}}`, nil)
		}, []summary{
			{Kind: "Broker", Name: "default", Ready: "True", Reason: "Ready"},
			{Kind: "Trigger", Name: "t1", Ready: "True", Reason: "Ready", Parent: "BrokerReady"},
			{Kind: "Subscription", Name: "s1", Ready: "False", Reason: ReasonNotCompiled, Parent: ReasonChannelDoesNotExist},
		}},
		{"subscription edited: the channel reports it", func(t *testing.T, live liveSet) {
			live[liveKey{knative.KindSubscription, ns, "s1"}] = liveObject(t, "Subscription", "s1", 4,
				`{"channel":{"apiVersion":"messaging.knative.dev/v1","kind":"Channel","name":"orders","namespace":"shop"},"subscriber":{"uri":"http://elsewhere/"}}`, nil)
		}, []summary{
			{Kind: "Broker", Name: "default", Ready: "True", Reason: "Ready"},
			{Kind: "Trigger", Name: "t1", Ready: "True", Reason: "Ready", Parent: "BrokerReady"},
			{Kind: "Channel", Name: "orders", Ready: "True", Reason: "Ready", SubscriberUIDs: []string{"uid-s1/False"}},
			{Kind: "Subscription", Name: "s1", Ready: "False", Reason: ReasonNotCompiled, Parent: "ChannelReady"},
		}},
		{"objects that are not in the table", func(t *testing.T, live liveSet) {
			live[liveKey{knative.KindTrigger, ns, "lost"}] = liveObject(t, "Trigger", "lost", 1, `{"broker":"missing","subscriber":{"uri":"http://a/"}}`, nil)
			live[liveKey{knative.KindTrigger, ns, "by-hand"}] = liveObject(t, "Trigger", "by-hand", 1, `{"broker":"default","subscriber":{"uri":"http://a/"}}`, nil)
			live[liveKey{knative.KindBroker, ns, "kafka"}] = liveObject(t, "Broker", "kafka", 1, `{}`, map[string]string{brokerClassAnnotation: "Kafka"})
			live[liveKey{knative.KindTrigger, ns, "on-kafka"}] = liveObject(t, "Trigger", "on-kafka", 1, `{"broker":"kafka","subscriber":{"uri":"http://a/"}}`, nil)
			live[liveKey{knative.KindBroker, ns, "new"}] = liveObject(t, "Broker", "new", 1, `{}`, kncBroker)
		}, []summary{
			{Kind: "Broker", Name: "default", Ready: "True", Reason: "Ready"},
			{Kind: "Trigger", Name: "t1", Ready: "True", Reason: "Ready", Parent: "BrokerReady"},
			{Kind: "Channel", Name: "orders", Ready: "True", Reason: "Ready", SubscriberUIDs: []string{"uid-s1/True"}},
			{Kind: "Subscription", Name: "s1", Ready: "True", Reason: "Ready", Parent: "ChannelReady"},
			{Kind: "Broker", Name: "new", Ready: "False", Reason: ReasonNotCompiled},
			{Kind: "Trigger", Name: "by-hand", Ready: "False", Reason: ReasonNotCompiled},
			{Kind: "Trigger", Name: "lost", Ready: "False", Reason: ReasonBrokerDoesNotExist, Parent: ReasonBrokerDoesNotExist},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			table := testTable(t)
			live := all(t)
			tt.change(t, live)
			got := plan(planInput{table: table, computed: computeFor(table), live: live, own: map[string]bool{ns: true}})
			if diff := cmp.Diff(tt.want, summarize(got)); diff != "" {
				t.Errorf("plan (-want +got):\n%s", diff)
			}
		})
	}
}

func TestPlanLeavesOtherNamespacesAlone(t *testing.T) {
	table := testTable(t)
	live := liveSet{
		{knative.KindTrigger, ns, "lost"}: liveObject(t, "Trigger", "lost", 1, `{"broker":"missing","subscriber":{"uri":"http://a/"}}`, nil),
	}
	got := plan(planInput{table: table, computed: computeFor(table), live: live, own: map[string]bool{"elsewhere": true}})
	if len(got) != 0 {
		t.Errorf("plan reports on %v, which is not in a namespace the runtime serves", summarize(got))
	}
}

func TestPlanChannelFields(t *testing.T) {
	table := testTable(t)
	live := liveSet{
		{knative.KindChannel, ns, "orders"}:  liveObject(t, "Channel", "orders", 1, channelSpec, nil),
		{knative.KindSubscription, ns, "s1"}: liveObject(t, "Subscription", "s1", 3, subSpec, nil),
	}
	got := plan(planInput{table: table, computed: computeFor(table), live: live, own: map[string]bool{ns: true}})
	if len(got) != 2 || got[0].kind != knative.KindChannel {
		t.Fatalf("planned %v", summarize(got))
	}
	ch := got[0]
	wantSubs := []status.SubscriberStatus{{UID: "uid-s1", ObservedGeneration: 3, Ready: "True", Message: "the channel delivers to this subscription"}}
	if diff := cmp.Diff(wantSubs, ch.status.Subscribers); diff != "" {
		t.Errorf("subscribers (-want +got):\n%s", diff)
	}
	wantRef := &KReference{APIVersion: channelAPIVersionKnc, Kind: channelKindKnc, Name: "orders", Namespace: ns}
	if diff := cmp.Diff(wantRef, ch.channel); diff != "" {
		t.Errorf("status.channel (-want +got):\n%s", diff)
	}
	if ch.status.Address == nil || ch.status.Address.URL != table.Channels[0].Address {
		t.Errorf("address = %v, want the compiled %s", ch.status.Address, table.Channels[0].Address)
	}
}

// TestPlanPingSources writes the computed status of a PingSource of the
// table that is live, and leaves alone one that is not in the table.
func TestPlanPingSources(t *testing.T) {
	table := testTable(t)
	table.PingSources = []routing.PingSource{{
		Source: routing.Source{Namespace: ns, Name: "heartbeat"}, Schedule: "* * * * *",
		Sink: routing.Destination{URI: "http://knc-ingress.shop.svc.cluster.local/brokers/shop/default"}, SinkPath: "/brokers/shop/default",
	}}
	computed := status.Compute(status.Input{
		Table: table,
		Ping:  func(routing.Source) status.Ingress { return status.Ingress{Ready: true} },
		Now:   time.Unix(0, 0),
	})
	live := liveSet{
		{knative.KindPingSource, ns, "heartbeat"}: liveObject(t, knative.KindPingSource, "heartbeat", 4, `{"schedule":"* * * * *"}`, nil),
		{knative.KindPingSource, ns, "other"}:     liveObject(t, knative.KindPingSource, "other", 1, `{"schedule":"* * * * *"}`, nil),
	}
	var got []string
	for _, d := range plan(planInput{table: table, computed: computed, live: live, own: map[string]bool{ns: true}}) {
		if d.kind != knative.KindPingSource {
			continue
		}
		s := d.status
		got = append(got, d.live.GetName()+" "+s.SinkURI+" "+s.Conditions[0].Type+"="+s.Conditions[0].Status+" "+s.CloudEventAttributes[0].Type)
	}
	want := []string{"heartbeat http://knc-ingress.shop.svc.cluster.local/brokers/shop/default Ready=True dev.knative.sources.ping"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("planned PingSources (-want +got):\n%s", d)
	}
}
