package ping

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
)

func mustTime(t *testing.T, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestScheduleNextTicks(t *testing.T) {
	tests := []struct {
		name, schedule, timezone, from string
		want                           []string
	}{
		{"every minute", "* * * * *", "", "2026-03-01T10:00:30Z",
			[]string{"2026-03-01T10:01:00Z", "2026-03-01T10:02:00Z", "2026-03-01T10:03:00Z"}},
		{"no time zone is UTC", "0 9 * * *", "", "2026-03-01T10:00:00Z",
			[]string{"2026-03-02T09:00:00Z", "2026-03-03T09:00:00Z"}},
		{"9am in Paris, winter then summer time", "0 9 * * *", "Europe/Paris", "2026-03-28T00:00:00Z",
			[]string{"2026-03-28T08:00:00Z", "2026-03-29T07:00:00Z", "2026-03-30T07:00:00Z"}},
		{"optional seconds field", "*/20 * * * * *", "", "2026-03-01T10:00:00Z",
			[]string{"2026-03-01T10:00:20Z", "2026-03-01T10:00:40Z", "2026-03-01T10:01:00Z"}},
		{"descriptor", "@hourly", "America/New_York", "2026-03-01T10:30:00Z",
			[]string{"2026-03-01T11:00:00Z", "2026-03-01T12:00:00Z"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := ParseSchedule(tt.schedule, tt.timezone)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			at := mustTime(t, tt.from)
			for range tt.want {
				at = s.Next(at)
				got = append(got, at.UTC().Format(time.RFC3339))
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("ticks (-want +got):\n%s", d)
			}
		})
	}
}

func TestParseScheduleRejects(t *testing.T) {
	for _, tt := range []struct{ schedule, timezone string }{
		{"* * *", ""}, {"61 * * * *", ""}, {"* * * * *", "Mars/Olympus"},
	} {
		if _, err := ParseSchedule(tt.schedule, tt.timezone); err == nil {
			t.Errorf("ParseSchedule(%q, %q) succeeded, want an error", tt.schedule, tt.timezone)
		}
	}
}

func TestEventID(t *testing.T) {
	tick := mustTime(t, "2026-03-01T10:01:00Z")
	id := EventID("shop", "heartbeat", tick)
	// The same tick in another zone is the same instant, the same id.
	if again := EventID("shop", "heartbeat", tick.In(time.FixedZone("x", 3600))); again != id {
		t.Errorf("the same tick has two ids: %s and %s", id, again)
	}
	others := map[string]string{
		"next tick":      EventID("shop", "heartbeat", tick.Add(time.Minute)),
		"other name":     EventID("shop", "heartbeat2", tick),
		"other ns":       EventID("shop2", "heartbeat", tick),
		"shifted '/'":    EventID("shop/heartbeat", "", tick),
		"one nanosecond": EventID("shop", "heartbeat", tick.Add(1)),
	}
	for name, other := range others {
		if other == id {
			t.Errorf("%s: same id %s", name, id)
		}
	}
	// Replicas of two versions of the runtime, as during a rolling
	// update, must make the same id for a tick.
	if want := "efa2960d-5174-5199-a606-eb1014842fc9"; id != want {
		t.Errorf("EventID = %s, want %s as in earlier versions", id, want)
	}
}

// eventView is what a test compares of an event.
type eventView struct {
	ID, Type, Source, Time, ContentType string
	Extensions                          map[string]any
	Data                                string
}

func view(e *event.Event) eventView {
	return eventView{ID: e.ID(), Type: e.Type(), Source: e.Source(), Time: e.Time().UTC().Format(time.RFC3339),
		ContentType: e.DataContentType(), Extensions: e.Extensions(), Data: string(e.Data())}
}

func TestNewEvent(t *testing.T) {
	tick := mustTime(t, "2026-03-01T10:01:00Z")
	id := EventID("shop", "hb", tick)
	base := routing.PingSource{Source: routing.Source{Namespace: "shop", Name: "hb"}, Schedule: "* * * * *"}
	with := func(f func(*routing.PingSource)) *routing.PingSource { p := base; f(&p); return &p }
	tests := []struct {
		name string
		ps   *routing.PingSource
		want eventView
	}{
		{"no data", &base, eventView{ID: id, Type: knative.PingSourceEventType, Source: "/apis/v1/namespaces/shop/pingsources/hb", Time: "2026-03-01T10:01:00Z", Extensions: map[string]any{}}},
		{"json data", with(func(p *routing.PingSource) { p.ContentType, p.Data = "application/json", `{"a":1}` }),
			eventView{ID: id, Type: knative.PingSourceEventType, Source: "/apis/v1/namespaces/shop/pingsources/hb", Time: "2026-03-01T10:01:00Z", ContentType: "application/json", Extensions: map[string]any{}, Data: `{"a":1}`}},
		{"data without content type", with(func(p *routing.PingSource) { p.Data = "plain" }),
			eventView{ID: id, Type: knative.PingSourceEventType, Source: "/apis/v1/namespaces/shop/pingsources/hb", Time: "2026-03-01T10:01:00Z", Extensions: map[string]any{}, Data: "plain"}},
		{"dataBase64 is decoded", with(func(p *routing.PingSource) { p.ContentType, p.DataBase64 = "text/plain", "aGVsbG8=" }),
			eventView{ID: id, Type: knative.PingSourceEventType, Source: "/apis/v1/namespaces/shop/pingsources/hb", Time: "2026-03-01T10:01:00Z", ContentType: "text/plain", Extensions: map[string]any{}, Data: "hello"}},
		{"ceOverrides extensions", with(func(p *routing.PingSource) { p.Extensions = map[string]string{"team": "shop", "tier": "1"} }),
			eventView{ID: id, Type: knative.PingSourceEventType, Source: "/apis/v1/namespaces/shop/pingsources/hb", Time: "2026-03-01T10:01:00Z", Extensions: map[string]any{"team": "shop", "tier": "1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := NewEvent(tt.ps, tick)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tt.want, view(e), cmpopts.EquateEmpty()); d != "" {
				t.Errorf("event (-want +got):\n%s", d)
			}
		})
	}
	if _, err := NewEvent(with(func(p *routing.PingSource) { p.Extensions = map[string]string{"Bad-Name": "x"} }), tick); err == nil {
		t.Error("an invalid extension name made an event")
	}
}

// steppedClock is a Clock the test steps. Each SleepUntil sends the time
// it waits for to sleeps, so that the test knows when the scheduler waits.
type steppedClock struct {
	mu     sync.Mutex
	now    time.Time
	wake   chan struct{}
	sleeps chan time.Time
}

func newSteppedClock(now time.Time) *steppedClock {
	return &steppedClock{now: now, wake: make(chan struct{}), sleeps: make(chan time.Time, 100)}
}

// asleepUntil waits for the scheduler to sleep until want.
func (c *steppedClock) asleepUntil(t *testing.T, want string) {
	t.Helper()
	select {
	case got := <-c.sleeps:
		if got.UTC().Format(time.RFC3339) != want {
			t.Fatalf("the scheduler sleeps until %s, want %s", got.UTC().Format(time.RFC3339), want)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the scheduler did not sleep until %s within 30s", want)
	}
}

func (c *steppedClock) Now() (time.Time, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now, nil
}

func (c *steppedClock) set(t time.Time) {
	c.mu.Lock()
	c.now = t
	close(c.wake)
	c.wake = make(chan struct{})
	c.mu.Unlock()
}

func (c *steppedClock) SleepUntil(ctx context.Context, t time.Time) error {
	c.sleeps <- t
	for {
		c.mu.Lock()
		now, wake := c.now, c.wake
		c.mu.Unlock()
		if !now.Before(t) {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

type firings struct {
	mu     sync.Mutex
	ticks  []string
	missed []string
	ch     chan struct{}
}

func (f *firings) fire(_ context.Context, ps *routing.PingSource, tick time.Time, ev *event.Event) {
	f.mu.Lock()
	f.ticks = append(f.ticks, ps.Name+"@"+tick.UTC().Format(time.RFC3339))
	f.mu.Unlock()
	f.ch <- struct{}{}
}

func (f *firings) miss(ps *routing.PingSource, tick time.Time) {
	f.mu.Lock()
	f.missed = append(f.missed, ps.Name+"@"+tick.UTC().Format(time.RFC3339))
	f.mu.Unlock()
	f.ch <- struct{}{}
}

func (f *firings) wait(t *testing.T, n int) {
	t.Helper()
	for range n {
		select {
		case <-f.ch:
		case <-time.After(30 * time.Second):
			t.Fatal("no tick within 30s")
		}
	}
}

func TestSchedulerFiresTicksAndDoesNotCatchUp(t *testing.T) {
	start := mustTime(t, "2026-03-01T10:00:30Z")
	clock := newSteppedClock(start)
	f := &firings{ch: make(chan struct{}, 100)}
	s := New(Config{Clock: clock, Fire: f.fire, Missed: f.miss, MaxLateness: 10 * time.Second})
	defer s.Stop()
	ps := routing.PingSource{Source: routing.Source{Namespace: "shop", Name: "hb"}, Schedule: "* * * * *"}
	if errs := s.Update([]routing.PingSource{ps}); len(errs) > 0 {
		t.Fatal(errs)
	}
	step := func(at string) { clock.set(mustTime(t, at)) }
	clock.asleepUntil(t, "2026-03-01T10:01:00Z")
	step("2026-03-01T10:00:59Z") // no tick yet
	step("2026-03-01T10:01:00Z")
	f.wait(t, 1)
	clock.asleepUntil(t, "2026-03-01T10:02:00Z")
	step("2026-03-01T10:02:05Z") // five seconds late: fired
	f.wait(t, 1)
	// Three ticks pass at once; only the last is fired, and only when on
	// time.
	clock.asleepUntil(t, "2026-03-01T10:03:00Z")
	step("2026-03-01T10:05:00Z")
	f.wait(t, 1)
	clock.asleepUntil(t, "2026-03-01T10:06:00Z")
	step("2026-03-01T10:06:30Z") // thirty seconds late: missed
	f.wait(t, 1)
	clock.asleepUntil(t, "2026-03-01T10:07:00Z")
	step("2026-03-01T10:07:00Z")
	f.wait(t, 1)
	f.mu.Lock()
	got := []any{f.ticks, f.missed}
	f.mu.Unlock()
	want := []any{
		[]string{"hb@2026-03-01T10:01:00Z", "hb@2026-03-01T10:02:00Z", "hb@2026-03-01T10:05:00Z", "hb@2026-03-01T10:07:00Z"},
		[]string{"hb@2026-03-01T10:06:00Z"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("fired and missed ticks (-want +got):\n%s", d)
	}
}

func TestSchedulerUpdate(t *testing.T) {
	clock := newSteppedClock(mustTime(t, "2026-03-01T10:00:30Z"))
	f := &firings{ch: make(chan struct{}, 100)}
	s := New(Config{Clock: clock, Fire: f.fire})
	defer s.Stop()
	a := routing.PingSource{Source: routing.Source{Namespace: "shop", Name: "a"}, Schedule: "* * * * *"}
	bad := routing.PingSource{Source: routing.Source{Namespace: "shop", Name: "bad"}, Schedule: "not a schedule"}
	errs := s.Update([]routing.PingSource{a, bad})
	if len(errs) != 1 || errs["shop/bad"] == nil || s.Running("shop/bad") || !s.Running("shop/a") {
		t.Fatalf("Update = %v; running a %v, bad %v; want an error for bad, a running and bad not", errs, s.Running("shop/a"), s.Running("shop/bad"))
	}
	if errs := s.Update(nil); len(errs) > 0 || s.Running("shop/a") {
		t.Fatalf("Update(nil) = %v, a still running: %v", errs, s.Running("shop/a"))
	}
}

func TestFileClock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "clock")
	c := FileClock{Path: path, Poll: time.Millisecond}
	if _, err := c.Now(); err == nil {
		t.Fatal("a missing file read as a time")
	}
	if err := os.WriteFile(path, []byte("2026-03-01T10:00:00Z\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	now, err := c.Now()
	if err != nil || !now.Equal(mustTime(t, "2026-03-01T10:00:00Z")) {
		t.Fatalf("Now = %v, %v", now, err)
	}
	done := make(chan error, 1)
	go func() { done <- c.SleepUntil(context.Background(), mustTime(t, "2026-03-01T10:01:00Z")) }()
	select {
	case err := <-done:
		t.Fatalf("SleepUntil returned before the file reached the time: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := os.WriteFile(path, []byte("2026-03-01T10:01:00Z"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
