package ui

import (
	"strconv"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
)

func testEvent(id string) *event.Event {
	ev := event.New()
	ev.SetID(id)
	ev.SetSource("/s")
	ev.SetType("t")
	return &ev
}

func ids(events []RecentEvent) []string {
	var out []string
	for _, e := range events {
		out = append(out, e.Attributes["id"])
	}
	return out
}

func TestRecentKeepsTheLastEventsOfEachRoute(t *testing.T) {
	r := NewRecent(3)
	for i := range 8 {
		r.Matched("Trigger", "ns", "a", testEvent("a"+strconv.Itoa(i)))
	}
	r.Matched("Trigger", "ns", "b", testEvent("b0"))
	tests := []struct {
		id   string
		want []string
	}{
		{"Trigger/ns/a", []string{"a7", "a6", "a5"}},
		{"Trigger/ns/b", []string{"b0"}},
		{"Trigger/ns/none", nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(r.Events(tt.id))); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.id, diff)
		}
	}
	for _, rg := range r.rings {
		if cap(rg.events) > 3 {
			t.Errorf("a ring grew to %d events", cap(rg.events))
		}
	}
	r.Forget(func(id string) bool { return id == "Trigger/ns/b" })
	if got := r.Events("Trigger/ns/a"); len(got) != 0 {
		t.Errorf("events of a route forgotten: %v", got)
	}
}

func TestRecentSize(t *testing.T) {
	for _, tt := range []struct{ size, want int }{{0, 0}, {-1, 0}, {1, 1}, {20, 20}, {MaxRecentEvents + 1, MaxRecentEvents}} {
		if got := NewRecent(tt.size).Size(); got != tt.want {
			t.Errorf("NewRecent(%d).Size() = %d, want %d", tt.size, got, tt.want)
		}
	}
	var off *Recent
	off.Matched("Trigger", "ns", "a", testEvent("x"))
	if got := off.Events("Trigger/ns/a"); len(got) != 0 {
		t.Errorf("a nil Recent kept %v", got)
	}
}

func TestRecentKeepsAttributesOnly(t *testing.T) {
	ev := testEvent("1")
	ev.SetSubject("order-1")
	ev.SetExtension("tenant", "acme")
	ev.SetExtension("huge", strings.Repeat("x", 10000))
	if err := ev.SetData("application/json", map[string]string{"card": "4111"}); err != nil {
		t.Fatal(err)
	}
	r := NewRecent(1)
	r.Matched("Subscription", "ns", "s", ev)
	got := r.Events("Subscription/ns/s")[0].Attributes
	want := map[string]string{
		"specversion": "1.0", "id": "1", "source": "/s", "type": "t", "subject": "order-1",
		"datacontenttype": "application/json", "tenant": "acme", "huge": strings.Repeat("x", maxValueBytes) + "…",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("attributes (-want +got):\n%s", diff)
	}
}

func BenchmarkMatched(b *testing.B) {
	r := NewRecent(20)
	ev := testEvent("1")
	ev.SetExtension("tenant", "acme")
	b.ReportAllocs()
	for b.Loop() {
		r.Matched("Trigger", "ns", "a", ev)
	}
}
