package router

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

// newEvent builds a 1.0 event of type typ from source src, with the given
// extensions ("name=value").
func newEvent(t testing.TB, typ, src string, extensions ...string) *event.Event {
	t.Helper()
	e := event.New()
	e.SetID("id-1")
	e.SetType(typ)
	e.SetSource(src)
	for _, kv := range extensions {
		name, value, _ := strings.Cut(kv, "=")
		e.SetExtension(name, value)
	}
	if err := e.Validate(); err != nil {
		t.Fatalf("test event is invalid: %v", err)
	}
	return &e
}

func trigger(name string, filters ...routing.Filter) routing.Trigger {
	return routing.Trigger{Source: routing.Source{Namespace: "default", Name: name}, Filters: filters}
}

func legacy(name string, attributes map[string]string) routing.Trigger {
	return routing.Trigger{Source: routing.Source{Namespace: "default", Name: name}, Attributes: attributes}
}

func TestMatchSemantics(t *testing.T) {
	full := newEvent(t, "com.example.order.created", "https://shop.example/orders", "region=eu", "tenant=acme")
	full.SetSubject("order/42")
	full.SetTime(time.Date(2024, 5, 1, 12, 30, 0, 0, time.FixedZone("", 2*3600)))
	full.SetDataSchema("https://schema.example/order")
	if err := full.SetData("application/json", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}

	v03 := event.New(event.CloudEventsVersionV03)
	v03.SetID("id-1")
	v03.SetType("com.example.order.created")
	v03.SetSource("https://shop.example/orders")
	v03.SetExtension("region", "eu")

	tests := []struct {
		name    string
		trigger routing.Trigger
		event   *event.Event
		want    bool
	}{
		{"no filter matches everything", trigger("t"), full, true},
		{"empty legacy map matches everything", legacy("t", map[string]string{}), full, true},
		{"legacy exact", legacy("t", map[string]string{"type": "com.example.order.created"}), full, true},
		{"legacy exact mismatch", legacy("t", map[string]string{"type": "com.example.order"}), full, false},
		{"legacy empty value needs presence", legacy("t", map[string]string{"region": ""}), full, true},
		{"legacy empty value missing attribute", legacy("t", map[string]string{"zone": ""}), full, false},
		{"legacy all keys", legacy("t", map[string]string{"type": "com.example.order.created", "region": "us"}), full, false},
		{"legacy ignored when filters set", routing.Trigger{
			Source:     routing.Source{Namespace: "default", Name: "t"},
			Attributes: map[string]string{"type": "nope"},
			Filters:    []routing.Filter{{Exact: map[string]string{"region": "eu"}}},
		}, full, true},
		{"exact type", trigger("t", routing.Filter{Exact: map[string]string{"type": "com.example.order.created"}}), full, true},
		{"exact source", trigger("t", routing.Filter{Exact: map[string]string{"source": "https://shop.example/orders"}}), full, true},
		{"exact id", trigger("t", routing.Filter{Exact: map[string]string{"id": "id-1"}}), full, true},
		{"exact specversion", trigger("t", routing.Filter{Exact: map[string]string{"specversion": "1.0"}}), full, true},
		{"exact subject", trigger("t", routing.Filter{Exact: map[string]string{"subject": "order/42"}}), full, true},
		{"exact time keeps its offset", trigger("t", routing.Filter{Exact: map[string]string{"time": "2024-05-01T12:30:00+02:00"}}), full, true},
		{"exact dataschema", trigger("t", routing.Filter{Exact: map[string]string{"dataschema": "https://schema.example/order"}}), full, true},
		{"exact datacontenttype", trigger("t", routing.Filter{Exact: map[string]string{"datacontenttype": "application/json"}}), full, true},
		{"exact extension", trigger("t", routing.Filter{Exact: map[string]string{"tenant": "acme"}}), full, true},
		{"exact missing subject", trigger("t", routing.Filter{Exact: map[string]string{"subject": "x"}}), newEvent(t, "a", "b"), false},
		{"exact is case sensitive", trigger("t", routing.Filter{Exact: map[string]string{"tenant": "ACME"}}), full, false},
		{"exact map needs every key", trigger("t", routing.Filter{Exact: map[string]string{"tenant": "acme", "region": "us"}}), full, false},
		{"prefix", trigger("t", routing.Filter{Prefix: map[string]string{"type": "com.example."}}), full, true},
		{"prefix mismatch", trigger("t", routing.Filter{Prefix: map[string]string{"type": "org."}}), full, false},
		{"prefix missing attribute", trigger("t", routing.Filter{Prefix: map[string]string{"zone": "x"}}), full, false},
		{"suffix", trigger("t", routing.Filter{Suffix: map[string]string{"type": ".created"}}), full, true},
		{"suffix mismatch", trigger("t", routing.Filter{Suffix: map[string]string{"type": ".deleted"}}), full, false},
		{"suffix missing attribute", trigger("t", routing.Filter{Suffix: map[string]string{"zone": "x"}}), full, false},
		{"all", trigger("t", routing.Filter{All: []routing.Filter{
			{Exact: map[string]string{"region": "eu"}}, {Prefix: map[string]string{"type": "com."}},
		}}), full, true},
		{"all with one failing", trigger("t", routing.Filter{All: []routing.Filter{
			{Exact: map[string]string{"region": "eu"}}, {Prefix: map[string]string{"type": "org."}},
		}}), full, false},
		{"any", trigger("t", routing.Filter{Any: []routing.Filter{
			{Exact: map[string]string{"region": "us"}}, {Prefix: map[string]string{"type": "com."}},
		}}), full, true},
		{"any with none passing", trigger("t", routing.Filter{Any: []routing.Filter{
			{Exact: map[string]string{"region": "us"}}, {Prefix: map[string]string{"type": "org."}},
		}}), full, false},
		{"not", trigger("t", routing.Filter{Not: &routing.Filter{Exact: map[string]string{"region": "us"}}}), full, true},
		{"not of a passing filter", trigger("t", routing.Filter{Not: &routing.Filter{Exact: map[string]string{"region": "eu"}}}), full, false},
		{"every top-level filter must pass", trigger("t",
			routing.Filter{Exact: map[string]string{"region": "eu"}},
			routing.Filter{Suffix: map[string]string{"type": ".deleted"}},
		), full, false},
		{"cesql", trigger("t", routing.Filter{CESQL: "type LIKE 'com.example.%' AND region = 'eu'"}), full, true},
		{"cesql false", trigger("t", routing.Filter{CESQL: "region = 'us'"}), full, false},
		{"cesql evaluation error is no match", trigger("t", routing.Filter{CESQL: "missingattr = 'x'"}), full, false},
		{"cesql non-Boolean result is no match", trigger("t", routing.Filter{CESQL: "1 + 1"}), full, false},
		{"0.3 event: exact type", trigger("t", routing.Filter{Exact: map[string]string{"type": "com.example.order.created"}}), &v03, true},
		{"0.3 event: specversion", trigger("t", routing.Filter{Exact: map[string]string{"specversion": "0.3"}}), &v03, true},
		{"0.3 event: extension", legacy("t", map[string]string{"region": "eu", "source": "https://shop.example/orders"}), &v03, true},
		{"not of a cesql evaluation error matches", trigger("t", routing.Filter{Not: &routing.Filter{CESQL: "missingattr = 'x'"}}), full, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Compile([]routing.Trigger{tt.trigger})
			if err != nil {
				t.Fatalf("Compile: %v", err)
			}
			var want []int
			if tt.want {
				want = []int{0}
			}
			if diff := cmp.Diff(want, m.Match(tt.event, nil)); diff != "" {
				t.Errorf("Match (-want +got):\n%s", diff)
			}
			verdicts := m.Explain(tt.event)
			if len(verdicts) != 1 || verdicts[0].Matched != tt.want {
				t.Errorf("Explain = %+v, want Matched %t", verdicts, tt.want)
			}
		})
	}
}

// TestMatchConcurrently shares one Matcher between goroutines, as the
// runtime does; run with -race.
func TestMatchConcurrently(t *testing.T) {
	triggers := []routing.Trigger{
		trigger("exact", routing.Filter{Exact: map[string]string{"type": "com.example.order.created"}}),
		trigger("prefix", routing.Filter{Prefix: map[string]string{"source": "https://shop."}}),
		trigger("cesql", routing.Filter{CESQL: "region = 'eu'"}),
		trigger("miss", routing.Filter{Exact: map[string]string{"type": "other"}}),
	}
	m, err := Compile(triggers)
	if err != nil {
		t.Fatal(err)
	}
	e := newEvent(t, "com.example.order.created", "https://shop.example/orders", "region=eu")
	want := []int{0, 1, 2}
	var wg sync.WaitGroup
	diffs := make(chan string, 4)
	for range 4 {
		wg.Go(func() {
			var dst []int
			for range 500 {
				dst = m.Match(e, dst[:0])
				if diff := cmp.Diff(want, dst); diff != "" {
					diffs <- diff
					return
				}
			}
		})
	}
	wg.Wait()
	close(diffs)
	for diff := range diffs {
		t.Errorf("Match (-want +got):\n%s", diff)
	}
}

// TestMatchAppends checks that Match keeps what dst already holds.
func TestMatchAppends(t *testing.T) {
	m, err := Compile([]routing.Trigger{trigger("a"), trigger("b")})
	if err != nil {
		t.Fatal(err)
	}
	got := m.Match(newEvent(t, "a", "b"), []int{7})
	if diff := cmp.Diff([]int{7, 0, 1}, got); diff != "" {
		t.Errorf("Match (-want +got):\n%s", diff)
	}
}
