package routetest

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/routing"
)

const brokerAddr = "http://knc-ingress.shop.svc.cluster.local/brokers/shop/default"
const channelAddr = "http://knc-ingress.shop.svc.cluster.local/channels/shop/notify"

// table is a Broker with three Triggers, one forwarding to a Channel whose
// Subscriptions cover the reply rules of Knative's Subscription: a reply
// destination, none, and no subscriber (the event goes to the reply).
func table() *routing.Table {
	obj := func(name string) routing.Source { return routing.Source{Namespace: "shop", Name: name} }
	uri := func(u string) *routing.Destination { return &routing.Destination{URI: u} }
	return &routing.Table{
		Brokers: []routing.Broker{{
			Source: obj("default"), Address: brokerAddr,
			Triggers: []routing.Trigger{
				{Source: obj("orders"), Filters: []routing.Filter{{Exact: map[string]string{"type": "order"}}}, Subscriber: routing.Destination{URI: "http://orders/"}},
				{Source: obj("notify"), Filters: []routing.Filter{{Exact: map[string]string{"type": "note"}}}, Subscriber: routing.Destination{URI: channelAddr}},
				{Source: obj("receipts"), Filters: []routing.Filter{{Exact: map[string]string{"type": "receipt"}}}, Subscriber: routing.Destination{Ref: &routing.Ref{Kind: "Service", Namespace: "shop", Name: "elsewhere"}}},
			},
		}},
		Channels: []routing.Channel{{
			Source: obj("notify"), Address: channelAddr,
			Subscriptions: []routing.Subscription{
				{Source: obj("mail"), Subscriber: uri("http://mail/"), Reply: uri(brokerAddr)},
				{Source: obj("sms"), Subscriber: uri("http://sms/")},
				{Source: obj("archive"), Reply: uri("http://archive/")},
			},
		}},
	}
}

func TestEvaluate(t *testing.T) {
	tests := []struct {
		name string
		file string
		want Outcome
	}{{
		name: "a forward to a Channel reaches every Subscription",
		file: `cases: [{name: c, broker: shop/default, event: {type: note, source: /x}, expect: [notify]}]`,
		want: Outcome{Reached: []string{"notify"}, Destinations: []string{"http://archive/", "http://mail/", "http://sms/"}},
	}, {
		name: "a Subscription's reply goes to its reply, and a Trigger then routes it",
		file: `cases: [{name: c, broker: shop/default, event: {type: note, source: /x}, expect: [notify], replies: {mail: {type: receipt, source: /mail}}}]`,
		want: Outcome{Reached: []string{"notify"}, Destinations: []string{"Service/shop/elsewhere", "http://archive/", "http://mail/", "http://sms/"}},
	}, {
		name: "a reply of a Subscription without reply is dropped",
		file: `cases: [{name: c, channel: shop/notify, event: {type: note, source: /x}, expect: [archive, mail, sms], replies: {sms: {type: order, source: /sms}}}]`,
		want: Outcome{Reached: []string{"archive", "mail", "sms"}, Destinations: []string{"http://archive/", "http://mail/", "http://sms/"}},
	}, {
		name: "a Trigger's reply goes back to its Broker",
		file: `cases: [{name: c, broker: shop/default, event: {type: order, source: /x}, expect: [orders], replies: {shop/orders: {type: receipt, source: /o}}}]`,
		want: Outcome{Reached: []string{"orders"}, Destinations: []string{"Service/shop/elsewhere", "http://orders/"}},
	}, {
		name: "a reply declared for what is never reached is reported",
		file: `cases: [{name: c, broker: shop/default, event: {type: nothing, source: /x}, expect: none, replies: {orders: {type: receipt, source: /o}}}]`,
		want: Outcome{Unused: []string{"orders"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := Parse("t.knctest.yaml", []byte(tt.file), false)
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			got, err := NewEvaluator(table()).Evaluate(f.Cases[0])
			if err != nil {
				t.Fatal(err)
			}
			got.Reasons = nil
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateRoundTrips writes outcomes into a file, parses the result,
// and writes the same outcomes again: the text does not change.
func TestUpdateRoundTrips(t *testing.T) {
	src := `# head
cases:
- name: c   # the case
  broker: shop/default
  event: {type: note, source: /x}
  expect: [wrong]
  replies: {mail: {type: receipt, source: /mail}}
`
	once := updated(t, []byte(src), true)
	want := `# head
cases:
  - name: c # the case
    broker: shop/default
    event: {type: note, source: /x}
    expect: [notify]
    replies: {mail: {type: receipt, source: /mail}}
    destinations:
      - Service/shop/elsewhere
      - http://archive/
      - http://mail/
      - http://sms/
`
	if diff := cmp.Diff(want, string(once)); diff != "" {
		t.Errorf("updated file (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(string(once), string(updated(t, once, true))); diff != "" {
		t.Errorf("a second update changed the file (-first +second):\n%s", diff)
	}
}

// TestUpdateSplices checks that values on the line of their key are
// replaced in the text, leaving every other byte as it was.
func TestUpdateSplices(t *testing.T) {
	src := "cases:\n- name: c    # odd   spacing\n  broker: shop/default\n  event: {type: note, source: /x}\n  expect:   none   # was\n  replies: {mail: {type: receipt, source: /mail}}\n  destinations: [\"x y\", z]\n"
	got := updated(t, []byte(src), false)
	want := "cases:\n- name: c    # odd   spacing\n  broker: shop/default\n  event: {type: note, source: /x}\n  expect:   [notify]   # was\n  replies: {mail: {type: receipt, source: /mail}}\n  destinations: [Service/shop/elsewhere, http://archive/, http://mail/, http://sms/]\n"
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("updated file (-want +got):\n%s", diff)
	}
}

// updated parses src, a file of one case, evaluates the case against
// table() and returns the file with its outcome written in.
func updated(t *testing.T, src []byte, update bool) []byte {
	t.Helper()
	f, diags := Parse("t.knctest.yaml", src, update)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	o, err := NewEvaluator(table()).Evaluate(f.Cases[0])
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.Update(map[*Case]*Outcome{f.Cases[0]: o})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// sourcesTable is table() with a Trigger that takes the events of team
// ops, and a source of each way into the table: a Broker, a Channel, and
// a destination outside it.
func sourcesTable() *routing.Table {
	t := table()
	t.Brokers[0].Triggers = append(t.Brokers[0].Triggers, routing.Trigger{
		Source:     routing.Source{Namespace: "shop", Name: "ops"},
		Filters:    []routing.Filter{{Exact: map[string]string{"team": "ops"}}},
		Subscriber: routing.Destination{URI: "http://ops/"},
	})
	source := func(kind, name string, sink string, ext map[string]string) routing.EventSource {
		return routing.EventSource{Source: routing.Source{Namespace: "shop", Name: name}, APIVersion: "sources.knative.dev/v1", Kind: kind,
			Extensions: ext, Sink: routing.Destination{URI: sink}}
	}
	t.Sources = []routing.EventSource{
		source("ApiServerSource", "pods", brokerAddr, map[string]string{"team": "ops"}),
		source("ContainerSource", "pods", channelAddr, nil),
		source("SinkBinding", "bind", "http://receiver.example.com/", map[string]string{"team": "ops"}),
	}
	return t
}

func TestEvaluateSources(t *testing.T) {
	tests := []struct {
		name string
		file string
		want Outcome
	}{{
		name: "the source's extensions are set on the event, which its Broker routes",
		file: `cases: [{name: c, source: ApiServerSource/shop/pods, event: {type: order, source: /x}, expect: [ops, orders]}]`,
		want: Outcome{Reached: []string{"ops", "orders"}, Destinations: []string{"http://ops/", "http://orders/"}},
	}, {
		name: "an extension the event has is replaced by the source's",
		file: `cases: [{name: c, source: ApiServerSource/shop/pods, event: {type: nothing, source: /x, team: shop}, expect: [ops]}]`,
		want: Outcome{Reached: []string{"ops"}, Destinations: []string{"http://ops/"}},
	}, {
		name: "sources of two kinds may share a name",
		file: `cases: [{name: c, source: ContainerSource/shop/pods, event: {type: nothing, source: /x}, expect: [archive, mail, sms]}]`,
		want: Outcome{Reached: []string{"archive", "mail", "sms"}, Destinations: []string{"http://archive/", "http://mail/", "http://sms/"}},
	}, {
		name: "a sink outside the table is a final destination",
		file: `cases: [{name: c, source: SinkBinding/shop/bind, event: {type: order, source: /x}, expect: none}]`,
		want: Outcome{Destinations: []string{"http://receiver.example.com/"}},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := Parse("t.knctest.yaml", []byte(tt.file), false)
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			ev := NewEvaluator(sourcesTable())
			if !ev.Has(f.Cases[0].Target) {
				t.Fatalf("the table has no %s", f.Cases[0].Target)
			}
			got, err := ev.Evaluate(f.Cases[0])
			if err != nil {
				t.Fatal(err)
			}
			got.Reasons = nil
			if diff := cmp.Diff(&tt.want, got); diff != "" {
				t.Errorf("outcome (-want +got):\n%s", diff)
			}
		})
	}
}

// TestParseSourceTargets checks how a case names the source it starts
// at, and that only a PingSource's case may leave its event out.
func TestParseSourceTargets(t *testing.T) {
	tests := []struct {
		name, file string
		want       Target
		wantErr    string
	}{{
		name: "kind, namespace and name",
		file: `cases: [{name: c, source: ContainerSource/shop/beats, event: {type: t, source: /s}, expect: none}]`,
		want: Target{Kind: "ContainerSource", Namespace: "shop", Name: "beats"},
	}, {
		name: "a PingSource named as a source sends its own event",
		file: `cases: [{name: c, source: PingSource/shop/beat, expect: none}]`,
		want: Target{Kind: KindPingSource, Namespace: "shop", Name: "beat"},
	}, {
		name:    "another source needs its event",
		file:    `cases: [{name: c, source: ApiServerSource/shop/pods, expect: none}]`,
		wantErr: "t.knctest.yaml:1:9: cases[0]: a case that starts at an ApiServerSource needs the event it sends",
	}, {
		name:    "without a kind",
		file:    `cases: [{name: c, source: shop/pods, event: {type: t, source: /s}, expect: none}]`,
		wantErr: `t.knctest.yaml:1:27: cases[0].source: "shop/pods": want KIND/NAMESPACE/NAME`,
	}, {
		name:    "a kind with its group",
		file:    `cases: [{name: c, source: ApiServerSource.sources.knative.dev/shop/pods, event: {type: t, source: /s}, expect: none}]`,
		wantErr: `want KIND/NAMESPACE/NAME`,
	}, {
		name:    "a Channel is no source",
		file:    `cases: [{name: c, source: Channel/shop/c, event: {type: t, source: /s}, expect: none}]`,
		wantErr: `"Channel/shop/c": a Channel is no source; write channel: shop/c`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, diags := Parse("t.knctest.yaml", []byte(tt.file), false)
			if tt.wantErr != "" {
				if len(diags) != 1 || !strings.Contains(diags[0].String(), tt.wantErr) {
					t.Fatalf("diagnostics %v, want one containing %q", diags, tt.wantErr)
				}
				return
			}
			if len(diags) > 0 {
				t.Fatal(diags)
			}
			got := f.Cases[0].Target
			got.Pos = diag.Pos{}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("target (-want +got):\n%s", diff)
			}
		})
	}
}
