package resolve

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
)

func table() *routing.Table {
	return &routing.Table{
		Brokers: []routing.Broker{{
			Source: routing.Source{Namespace: "ns", Name: "b"},
			Path:   routing.BrokerPath("ns", "b"),
			Delivery: &routing.Delivery{DeadLetterSink: &routing.Destination{
				Ref: &routing.Ref{APIVersion: "messaging.knative.dev/v1", Kind: "Channel", Namespace: "ns", Name: "dead"}}},
			Triggers: []routing.Trigger{
				{Source: routing.Source{Namespace: "ns", Name: "plain"}, Subscriber: routing.Destination{URI: "http://svc.example/x"}},
				{Source: routing.Source{Namespace: "ns", Name: "ksvc"}, Subscriber: routing.Destination{
					Ref: &routing.Ref{APIVersion: "serving.knative.dev/v1", Kind: "Service", Namespace: "ns", Name: "fn"}}},
			},
		}},
		Channels: []routing.Channel{{
			Source: routing.Source{Namespace: "ns", Name: "dead"},
			Path:   routing.ChannelPath("ns", "dead"),
			Subscriptions: []routing.Subscription{{
				Source: routing.Source{Namespace: "ns", Name: "s"},
				Subscriber: &routing.Destination{URI: "/sub/path",
					Ref: &routing.Ref{APIVersion: "eventing.knative.dev/v1", Kind: "Broker", Namespace: "ns", Name: "b"}},
			}},
		}},
	}
}

func TestLocalResolve(t *testing.T) {
	tbl := table()
	local, err := NewLocal(tbl, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	got := All(context.Background(), tbl, local)

	unresolved := got[Site{knative.KindTrigger, "ns", "ksvc", FieldSubscriber}]
	if !errors.Is(unresolved.Err, ErrNotAddressable) {
		t.Errorf("ref to a Service: error %v, want one wrapping ErrNotAddressable", unresolved.Err)
	}
	// Errors are checked above; compare the URLs only.
	urls := map[Site]string{}
	for site, res := range got {
		urls[site] = res.URL
	}
	want := map[Site]string{
		{knative.KindBroker, "ns", "b", FieldDeadLetterSink}:   "http://127.0.0.1:8080/channels/ns/dead",
		{knative.KindTrigger, "ns", "plain", FieldSubscriber}:  "http://svc.example/x",
		{knative.KindTrigger, "ns", "ksvc", FieldSubscriber}:   "",
		{knative.KindSubscription, "ns", "s", FieldSubscriber}: "http://127.0.0.1:8080/sub/path",
	}
	if d := cmp.Diff(want, urls); d != "" {
		t.Errorf("resolved URLs (-want +got):\n%s", d)
	}
}

func TestRelative(t *testing.T) {
	tests := []struct {
		base, uri, want string
	}{
		{"http://h/brokers/ns/b", "", "http://h/brokers/ns/b"},
		{"http://h/brokers/ns/b", "/abs", "http://h/abs"},
		{"http://h/brokers/ns/", "extra", "http://h/brokers/ns/extra"},
		{"http://h/brokers/ns/b", "http://other/x", "http://other/x"},
	}
	for _, tt := range tests {
		base, err := NewLocal(&routing.Table{}, tt.base)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Relative(base.base, tt.uri)
		if err != nil {
			t.Fatal(err)
		}
		if got.String() != tt.want {
			t.Errorf("Relative(%q, %q) = %q, want %q", tt.base, tt.uri, got, tt.want)
		}
	}
}

func TestNewLocalRejectsRelativeBase(t *testing.T) {
	if _, err := NewLocal(&routing.Table{}, "/no/host"); err == nil {
		t.Error("NewLocal accepted a base URL without a host")
	}
}

// TestLocalResolvesClusterAddresses checks that a URI on the host of a
// served object's cluster address, which is what the compiler writes for a
// ref to a Broker or Channel of the repository, goes to the local listener
// with its path and query kept, and that other URIs stay as they are.
func TestLocalResolvesClusterAddresses(t *testing.T) {
	tbl := table()
	tbl.Brokers[0].Address = "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b"
	tbl.Channels[0].Address = "http://knc-ingress.ns.svc.cluster.local/channels/ns/dead"
	local, err := NewLocal(tbl, "http://127.0.0.1:8080")
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ uri, want string }{
		{"http://knc-ingress.ns.svc.cluster.local/channels/ns/dead", "http://127.0.0.1:8080/channels/ns/dead"},
		{"http://KNC-INGRESS.ns.svc.cluster.local/brokers/ns/b?x=1", "http://127.0.0.1:8080/brokers/ns/b?x=1"},
		{"http://knc-ingress.other.svc.cluster.local/brokers/other/b", "http://knc-ingress.other.svc.cluster.local/brokers/other/b"},
		{"https://knc-ingress.ns.svc.cluster.local/brokers/ns/b", "https://knc-ingress.ns.svc.cluster.local/brokers/ns/b"},
		{"http://svc.example/x", "http://svc.example/x"},
	} {
		u, err := local.Resolve(context.Background(), routing.Destination{URI: tt.uri})
		if err != nil {
			t.Errorf("%s: %v", tt.uri, err)
			continue
		}
		if u.String() != tt.want {
			t.Errorf("%s resolved to %s, want %s", tt.uri, u, tt.want)
		}
	}
}
