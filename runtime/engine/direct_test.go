package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/pipeline"
)

// TestSlowSubscriberDoesNotHoldBackOthers: a subscriber that takes every
// first-attempt slot of its target gets the rest of its events through the
// delivery stream, while the other Trigger of the same events is delivered
// at once.
func TestSlowSubscriberDoesNotHoldBackOthers(t *testing.T) {
	release := make(chan struct{})
	slow, fast := newRecorder(t), newRecorder(t)
	slow.respond = func(w http.ResponseWriter, _ *http.Request, _ int) {
		<-release
		w.WriteHeader(http.StatusAccepted)
	}
	e := startEngine(t, Options{
		Table:               brokerTable(trigger("slow", slow.srv.URL, nil), trigger("fast", fast.srv.URL, nil)),
		DeliveryConcurrency: 4,
	})
	const events = 12
	var want []string
	for i := range events {
		id := fmt.Sprintf("e%02d", i)
		want = append(want, id)
		if code := post(t, e.URL()+"/brokers/ns/b", id, "t"); code != http.StatusAccepted {
			t.Fatalf("POST %s = %d", id, code)
		}
	}
	eventually(t, 20*time.Second, "every event at the fast subscriber", func() bool { return fast.count() == events })
	if n := slow.count(); n > pipeline.TargetSlots(4)+e.opts.DeliveryConcurrency {
		t.Errorf("the slow subscriber has %d requests in progress, more than its dispatch and first-attempt slots", n)
	}
	close(release)
	eventually(t, 20*time.Second, "every event at the slow subscriber", func() bool { return slow.count() >= events })
	got := slices.Compact(slices.Sorted(slices.Values(slow.ids())))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events at the slow subscriber (-want +got):\n%s", diff)
	}
	eventually(t, 10*time.Second, "balanced accounts", func() bool {
		for _, o := range accountOf(t, e) {
			if o.Accepted != o.settled() {
				return false
			}
		}
		return true
	})
	accounts := accountOf(t, e)
	for _, target := range []string{"slow", "fast"} {
		if got := accounts["trigger/"+target].Delivered; got < events {
			t.Errorf("%s: %v delivered, want %d", target, got, events)
		}
	}
}

// TestRetryAfterFirstAttempt: a first attempt that fails is stored with its
// attempt count and backoff, and the dispatch stage makes the next attempt
// no earlier than the backoff asks.
func TestRetryAfterFirstAttempt(t *testing.T) {
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, _ *http.Request, n int) {
		if n < 3 {
			w.WriteHeader(http.StatusInternalServerError)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
	const delay = 400 * time.Millisecond
	tr := trigger("t", sub.srv.URL, nil)
	tr.Delivery = &routing.Delivery{Retry: 2, BackoffPolicy: routing.BackoffExponential, BackoffDelay: routing.Duration(delay)}
	e := startEngine(t, Options{Table: brokerTable(tr)})
	if code := post(t, e.URL()+"/brokers/ns/b", "retried", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	eventually(t, 10*time.Second, "three attempts", func() bool { return sub.count() == 3 })
	sub.mu.Lock()
	at := []time.Time{sub.events[0].at, sub.events[1].at, sub.events[2].at}
	sub.mu.Unlock()
	// Exponential backoff: delay after the first attempt, twice it after the
	// second, which only holds if the second attempt knows its number.
	for i, min := range []time.Duration{delay, 2 * delay} {
		if gap := at[i+1].Sub(at[i]); gap < min {
			t.Errorf("attempt %d came %s after attempt %d, want at least %s", i+2, gap, i+1, min)
		}
	}
	eventually(t, 5*time.Second, "the delivery counted once", func() bool {
		o := accountOf(t, e)["trigger/t"]
		return o.Accepted == 1 && o.Delivered == 1
	})
	if n := testutilCounter(e, "knc_events_dropped_total"); n != 0 {
		t.Errorf("%v events dropped, want 0", n)
	}
}

// TestFirstAttemptsAreCountedLikeStoredOnes: a delivery given up at its
// first attempt (no retries, no dead-letter sink) is accepted and dropped,
// once.
func TestFirstAttemptsAreCountedLikeStoredOnes(t *testing.T) {
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusBadRequest) }
	e := startEngine(t, Options{Table: brokerTable(trigger("t", sub.srv.URL, nil))})
	if code := post(t, e.URL()+"/brokers/ns/b", "refused", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	eventually(t, 10*time.Second, "the delivery given up", func() bool {
		o := accountOf(t, e)["trigger/t"]
		return o.Accepted == 1 && o.settled() == 1
	})
	if n := sub.count(); n != 1 {
		t.Errorf("%d attempts, want 1: 400 is not retried", n)
	}
}

// TestBrokerServedAgainDelivers: a Broker a reload removes and a later one
// serves again keeps its lane of first attempts, whose workers must not
// have ended with the route stage that started them.
func TestBrokerServedAgainDelivers(t *testing.T) {
	sub := newRecorder(t)
	table := brokerTable(trigger("t", sub.srv.URL, nil))
	e := startEngine(t, Options{Table: table})
	if code := post(t, e.URL()+"/brokers/ns/b", "before", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	eventually(t, 10*time.Second, "the first event delivered", func() bool { return sub.count() == 1 })

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	empty := &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind}
	if err := e.Reload(ctx, empty); err != nil {
		t.Fatal(err)
	}
	if err := e.Reload(ctx, table); err != nil {
		t.Fatal(err)
	}
	if code := post(t, e.URL()+"/brokers/ns/b", "after", "t"); code != http.StatusAccepted {
		t.Fatalf("POST after the reloads = %d", code)
	}
	eventually(t, 10*time.Second, "the second event delivered", func() bool { return sub.count() == 2 })
	if diff := cmp.Diff([]string{"before", "after"}, sub.ids()); diff != "" {
		t.Errorf("events delivered (-want +got):\n%s", diff)
	}
	// An attempt on a worker whose context ended hands its message back,
	// to be routed again: the route consumer must have delivered each
	// message once.
	e.mu.Lock()
	route, err := e.js.Consumer(ctx, e.currentPlan().ForPath("/brokers/ns/b").Names().InStream, consumerRoute)
	e.mu.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	info, err := route.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Delivered.Consumer != info.Delivered.Stream {
		t.Errorf("the route consumer made %d deliveries of %d messages: some were handed back", info.Delivered.Consumer, info.Delivered.Stream)
	}
}
