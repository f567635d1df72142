package router

import (
	"fmt"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/internal/routing"
)

// dialectCases holds one Trigger per filter dialect that the benchmark event
// passes.
var dialectCases = []struct {
	name    string
	trigger routing.Trigger
}{
	{"exact", trigger("t", routing.Filter{Exact: map[string]string{"type": "com.example.order.created"}})},
	{"prefix", trigger("t", routing.Filter{Prefix: map[string]string{"type": "com.example."}})},
	{"suffix", trigger("t", routing.Filter{Suffix: map[string]string{"type": ".created"}})},
	{"all", trigger("t", routing.Filter{All: []routing.Filter{
		{Exact: map[string]string{"type": "com.example.order.created"}},
		{Exact: map[string]string{"region": "eu"}},
	}})},
	{"any", trigger("t", routing.Filter{Any: []routing.Filter{
		{Exact: map[string]string{"region": "us"}},
		{Exact: map[string]string{"type": "com.example.order.created"}},
	}})},
	{"not", trigger("t", routing.Filter{Not: &routing.Filter{Exact: map[string]string{"region": "us"}}})},
	{"cesql", trigger("t", routing.Filter{CESQL: "type = 'com.example.order.created' AND region = 'eu'"})},
	{"attributes", legacy("t", map[string]string{"type": "com.example.order.created", "region": ""})},
}

func benchEvent(tb testing.TB) *event.Event {
	return newEvent(tb, "com.example.order.created", "https://shop.example/orders", "region=eu")
}

// TestMatchDoesNotAllocate checks the promise of Match: with room in dst,
// evaluating filters that read context attributes held as strings and
// extensions costs no allocation.
func TestMatchDoesNotAllocate(t *testing.T) {
	e := benchEvent(t)
	for _, tc := range dialectCases {
		if tc.name == "cesql" {
			continue // the CESQL library allocates per evaluation
		}
		t.Run(tc.name, func(t *testing.T) {
			m, err := Compile([]routing.Trigger{tc.trigger})
			if err != nil {
				t.Fatal(err)
			}
			dst := make([]int, 0, 4)
			allocs := testing.AllocsPerRun(100, func() {
				if got := m.Match(e, dst[:0]); len(got) != 1 {
					t.Fatalf("Match = %v, want one Trigger", got)
				}
			})
			if allocs != 0 {
				t.Errorf("Match allocates %v times per call, want 0", allocs)
			}
		})
	}
}

// BenchmarkFilter measures Match on a Broker with one Trigger using each
// dialect. Target: exact ≤ 100 ns/op.
func BenchmarkFilter(b *testing.B) {
	e := benchEvent(b)
	for _, tc := range dialectCases {
		b.Run(tc.name, func(b *testing.B) {
			m, err := Compile([]routing.Trigger{tc.trigger})
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]int, 0, 4)
			b.ReportAllocs()
			for b.Loop() {
				if got := m.Match(e, dst[:0]); len(got) != 1 {
					b.Fatalf("Match = %v, want one Trigger", got)
				}
			}
		})
	}
}

// BenchmarkFilterWithTTL measures Match on events carrying the Broker's TTL
// extension, as every event a Broker's ingress stores does: CESQL sees a
// copy of the event without it.
func BenchmarkFilterWithTTL(b *testing.B) {
	e := benchEvent(b)
	e.SetExtension("knativebrokerttl", int32(255))
	for _, tc := range dialectCases {
		if tc.name != "exact" && tc.name != "cesql" {
			continue
		}
		b.Run(tc.name, func(b *testing.B) {
			m, err := Compile([]routing.Trigger{tc.trigger})
			if err != nil {
				b.Fatal(err)
			}
			dst := make([]int, 0, 4)
			b.ReportAllocs()
			for b.Loop() {
				if got := m.Match(e, dst[:0]); len(got) != 1 {
					b.Fatalf("Match = %v, want one Trigger", got)
				}
			}
		})
	}
}

// BenchmarkMatch measures Match on a Broker with n Triggers where every
// event passes exactly one. Target: 1,000 Triggers at ≥ 0.8× the throughput
// of 1.
//
// Each run cycles through at least matchEvents distinct events, as the
// runtime sees a fresh event every time: with a single event the 1-Trigger
// case would measure an event that never leaves the L1 cache.
func BenchmarkMatch(b *testing.B) {
	const matchEvents = 1000
	for _, n := range []int{1, 1000, 10000} {
		events := max(n, matchEvents)
		b.Run(fmt.Sprintf("triggers=%d/exact-type", n), func(b *testing.B) {
			triggers := make([]routing.Trigger, n)
			for i := range triggers {
				triggers[i] = trigger(fmt.Sprint("t", i), routing.Filter{Exact: map[string]string{"type": fmt.Sprintf("com.example.order.v%d", i)}})
			}
			cases := make([]matchCase, events)
			for i := range cases {
				t := i % n
				cases[i] = matchCase{newEvent(b, fmt.Sprintf("com.example.order.v%d", t), "https://shop.example/orders", "region=eu"), t}
			}
			benchmarkMatch(b, triggers, cases)
		})
		b.Run(fmt.Sprintf("triggers=%d/mixed", n), func(b *testing.B) {
			// A quarter each: exact type and region, legacy type, a source
			// prefix, and an exact type with a CESQL condition that holds.
			triggers := make([]routing.Trigger, n)
			for i := range triggers {
				typ := fmt.Sprintf("com.example.order.v%d", i)
				name := fmt.Sprint("t", i)
				switch i % 4 {
				case 0:
					triggers[i] = trigger(name, routing.Filter{Exact: map[string]string{"type": typ, "region": "eu"}})
				case 1:
					triggers[i] = legacy(name, map[string]string{"type": typ})
				case 2:
					triggers[i] = trigger(name, routing.Filter{Prefix: map[string]string{"source": fmt.Sprintf("https://shop.example/%d/", i)}})
				case 3:
					triggers[i] = trigger(name, routing.Filter{Exact: map[string]string{"type": typ}}, routing.Filter{CESQL: "region = 'eu'"})
				}
			}
			cases := make([]matchCase, events)
			for i := range cases {
				t := i % n
				typ, src := fmt.Sprintf("com.example.order.v%d", t), "https://shop.example/orders"
				if t%4 == 2 {
					typ, src = "com.example.other", fmt.Sprintf("https://shop.example/%d/orders", t)
				}
				cases[i] = matchCase{newEvent(b, typ, src, "region=eu"), t}
			}
			benchmarkMatch(b, triggers, cases)
		})
	}
}

// matchCase is an event and the one Trigger it passes.
type matchCase struct {
	event   *event.Event
	trigger int
}

func benchmarkMatch(b *testing.B, triggers []routing.Trigger, cases []matchCase) {
	m, err := Compile(triggers)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range cases {
		if got := m.Match(c.event, nil); len(got) != 1 || got[0] != c.trigger {
			b.Fatalf("event of %s matches %v, want exactly [%d]", c.event.Type(), got, c.trigger)
		}
	}
	dst := make([]int, 0, 4)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		dst = m.Match(cases[i].event, dst[:0])
		if i++; i == len(cases) {
			i = 0
		}
	}
}
