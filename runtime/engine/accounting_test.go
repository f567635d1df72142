package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// outcomes are the accounting counters of one target.
type outcomes struct {
	Accepted, Delivered, DeadLettered, Replayed float64
	Kept, Dropped                               map[string]float64
}

// settled is the sum of the outcomes: kept letters evicted later
// (dropped, kept-letters-full) were counted kept.
func (o outcomes) settled() float64 {
	n := o.Delivered + o.DeadLettered
	for reason, v := range o.Kept {
		// A copy of a dead-lettered delivery, or a delivery's reply, is
		// not an outcome: the delivery has its own.
		if kept.Outcome(reason) {
			n += v
		}
	}
	for reason, v := range o.Dropped {
		if reason != metrics.DropKeptLettersFull {
			n += v
		}
	}
	return n
}

// accountOf reads the accounting counters of every target from e's registry.
func accountOf(t *testing.T, e *Engine) map[string]outcomes {
	t.Helper()
	families, err := e.opts.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]outcomes{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			key := labels["target_kind"] + "/" + labels["target"]
			o := out[key]
			v := m.GetCounter().GetValue()
			switch f.GetName() {
			case "knc_deliveries_accepted_total":
				o.Accepted += v
			case "knc_deliveries_delivered_total":
				o.Delivered += v
			case "knc_deliveries_dead_lettered_total":
				o.DeadLettered += v
			case "knc_deliveries_replayed_total":
				o.Replayed += v
			case "knc_deliveries_kept_total":
				if o.Kept == nil {
					o.Kept = map[string]float64{}
				}
				o.Kept[labels["reason"]] += v
			case "knc_deliveries_dropped_total":
				if o.Dropped == nil {
					o.Dropped = map[string]float64{}
				}
				o.Dropped[labels["reason"]] += v
			default:
				continue
			}
			out[key] = o
		}
	}
	return out
}

func answer(code int) func(http.ResponseWriter, *http.Request, int) {
	return func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(code) }
}

// TestAccountingInvariant sends events through targets with every outcome
// and checks, per target, that accepted = delivered + dead-lettered +
// dropped, that each count is the expected one, and that the subscribers
// saw as many distinct events as were counted delivered.
func TestAccountingInvariant(t *testing.T) {
	const events = 40
	ok := newRecorder(t)
	flaky := newRecorder(t)
	var flakyMu sync.Mutex
	flakySeen := map[string]bool{}
	flaky.respond = func(w http.ResponseWriter, r *http.Request, n int) {
		// The first attempt of each event fails.
		flakyMu.Lock()
		again := flakySeen[r.Header.Get("Ce-Id")]
		flakySeen[r.Header.Get("Ce-Id")] = true
		flakyMu.Unlock()
		if !again {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}
	rejecting := newRecorder(t)
	rejecting.respond = answer(http.StatusBadRequest)
	failing := newRecorder(t)
	failing.respond = answer(http.StatusInternalServerError)
	sink := newRecorder(t)
	brokenSink := newRecorder(t)
	brokenSink.respond = answer(http.StatusInternalServerError)
	replier := newRecorder(t)
	replier.respond = func(w http.ResponseWriter, r *http.Request, n int) {
		h := w.Header()
		h.Set("Ce-Specversion", "1.0")
		h.Set("Ce-Id", "reply-"+r.Header.Get("Ce-Id"))
		h.Set("Ce-Source", "/replier")
		h.Set("Ce-Type", "reply")
		w.WriteHeader(http.StatusOK)
	}
	replies := newRecorder(t)
	channelSub := newRecorder(t)

	withDelivery := func(tr routing.Trigger, d *routing.Delivery) routing.Trigger {
		tr.Delivery = d
		return tr
	}
	dest := func(r *recorder) *routing.Destination { return &routing.Destination{URI: r.srv.URL} }
	table := brokerTable(
		trigger("ok", ok.srv.URL, map[string]string{"type": "t"}),
		withDelivery(trigger("flaky", flaky.srv.URL, map[string]string{"type": "t"}),
			&routing.Delivery{Retry: 3, BackoffDelay: routing.Duration(10 * time.Millisecond)}),
		withDelivery(trigger("rejecting", rejecting.srv.URL, map[string]string{"type": "t"}),
			&routing.Delivery{Retry: 3, DeadLetterSink: dest(sink)}),
		withDelivery(trigger("failing", failing.srv.URL, map[string]string{"type": "t"}),
			&routing.Delivery{Retry: 1, BackoffDelay: routing.Duration(10 * time.Millisecond)}),
		withDelivery(trigger("sink-down", rejecting.srv.URL, map[string]string{"type": "t"}),
			&routing.Delivery{Retry: 1, BackoffDelay: routing.Duration(10 * time.Millisecond), DeadLetterSink: dest(brokenSink)}),
		trigger("replier", replier.srv.URL, map[string]string{"type": "t"}),
		trigger("replies", replies.srv.URL, map[string]string{"type": "reply"}),
		trigger("unmatched", ok.srv.URL, map[string]string{"type": "never"}),
	)
	table.Channels = []routing.Channel{{
		Source: routing.Source{Namespace: "ns", Name: "c"},
		Path:   routing.ChannelPath("ns", "c"),
		Subscriptions: []routing.Subscription{{
			Source:     routing.Source{Namespace: "ns", Name: "s"},
			Subscriber: dest(channelSub),
		}},
	}}
	e := startEngine(t, Options{Table: table})
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("b", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST to the broker = %d, want 202", code)
		}
		if code := post(t, e.URL()+"/channels/ns/c", fmt.Sprint("c", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST to the channel = %d, want 202", code)
		}
	}

	want := map[string]outcomes{
		"trigger/ok":        {Accepted: events, Delivered: events},
		"trigger/flaky":     {Accepted: events, Delivered: events},
		"trigger/rejecting": {Accepted: events, DeadLettered: events},
		"trigger/failing":   {Accepted: events, Kept: map[string]float64{kept.ReasonNoDeadLetterSink: events}},
		"trigger/sink-down": {Accepted: events, Kept: map[string]float64{kept.ReasonDeadLetterFailed: events}},
		"trigger/replier":   {Accepted: events, Delivered: events},
		"trigger/replies":   {Accepted: events, Delivered: events},
		"subscription/s":    {Accepted: events, Delivered: events},
		"trigger/unmatched": {},
	}
	eventually(t, 30*time.Second, "every delivery to settle", func() bool {
		got := accountOf(t, e)
		for key, w := range want {
			if got[key].settled() != w.Accepted || got[key].Accepted != w.Accepted {
				return false
			}
		}
		return true
	})
	got := accountOf(t, e)
	for key, o := range got {
		if o.Accepted != o.settled() {
			t.Errorf("%s: accepted %v != delivered %v + dead-lettered %v + kept %v + dropped %v", key, o.Accepted, o.Delivered, o.DeadLettered, o.Kept, o.Dropped)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("accounting (-want +got):\n%s", diff)
	}

	distinct := func(r *recorder) int {
		seen := map[string]bool{}
		for _, id := range r.ids() {
			seen[id] = true
		}
		return len(seen)
	}
	seen := map[string]int{
		"trigger/ok": distinct(ok), "trigger/flaky": distinct(flaky), "trigger/replier": distinct(replier),
		"trigger/replies": distinct(replies), "subscription/s": distinct(channelSub),
	}
	for key, n := range seen {
		if d := got[key].Delivered; d < float64(n) || n != events {
			t.Errorf("%s: %d distinct events seen, %v counted delivered; want %d of each", key, n, d, events)
		}
	}
	if n := distinct(sink); n != events {
		t.Errorf("the dead-letter sink saw %d distinct events, want %d", n, events)
	}
	if got := testutilCounter(e, "knc_replies_accepted_total"); got != events {
		t.Errorf("knc_replies_accepted_total = %v, want %d", got, events)
	}
	if got := testutilCounter(e, "knc_events_accepted_total"); got != 2*events {
		t.Errorf("knc_events_accepted_total = %v, want %d", got, 2*events)
	}
	body := scrape(t, e.URL())
	for _, name := range []string{"knc_deliveries_accepted_total", "knc_deliveries_delivered_total", "knc_deliveries_dead_lettered_total", "knc_deliveries_kept_total", "knc_replies_accepted_total"} {
		if !strings.Contains(body, name+"{") {
			t.Errorf("/metrics does not serve %s", name)
		}
	}
}

// TestDeletedTargetsHeldDeliveriesAreKept checks that the deliveries held
// for a Trigger whose subscriber never resolved are kept, reason unrouted,
// when a reload deletes the Trigger: kept and removed while another
// Trigger is still unresolved, moved back and kept by the dispatch stage
// once every Trigger left is ready.
func TestDeletedTargetsHeldDeliveriesAreKept(t *testing.T) {
	const events = 5
	ok := newRecorder(t)
	unresolved := func(name string) routing.Trigger {
		return routing.Trigger{
			Source:     routing.Source{Namespace: "ns", Name: name},
			Subscriber: routing.Destination{Ref: &routing.Ref{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "missing"}},
		}
	}
	e := startEngine(t, Options{
		Table:        brokerTable(trigger("ok", ok.srv.URL, nil), unresolved("first"), unresolved("second")),
		AdminAddr:    "127.0.0.1:0",
		BearerTokens: ingress.BearerTokens{ingress.AdminTokenPath: {testAdminToken}},
	})
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST = %d, want 202", code)
		}
	}
	eventually(t, 10*time.Second, "the held deliveries", func() bool {
		a := accountOf(t, e)
		return a["trigger/first"].Accepted == events && a["trigger/second"].Accepted == events && ok.count() == events
	})
	for _, step := range []struct {
		table   *routing.Table
		deleted string
	}{
		{brokerTable(trigger("ok", ok.srv.URL, nil), unresolved("second")), "trigger/first"},
		{brokerTable(trigger("ok", ok.srv.URL, nil)), "trigger/second"},
	} {
		if err := e.Reload(context.Background(), step.table); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "the held deliveries of "+step.deleted+" to be kept", func() bool {
			return accountOf(t, e)[step.deleted].Kept[kept.ReasonUnrouted] >= events
		})
	}
	want := outcomes{Accepted: events, Kept: map[string]float64{kept.ReasonUnrouted: events}}
	got := accountOf(t, e)
	for _, key := range []string{"trigger/first", "trigger/second"} {
		if diff := cmp.Diff(want, got[key]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", key, diff)
		}
	}
	letters := map[string]int{}
	for _, l := range listLetters(t, e, kept.Filter{Reason: kept.ReasonUnrouted}) {
		letters[l.TargetKind+"/"+l.Target]++
		if l.Error == "" || l.Event.Type != "t" {
			t.Errorf("letter %+v: want the event and why it was kept", l)
		}
	}
	if d := cmp.Diff(map[string]int{"Trigger/first": events, "Trigger/second": events}, letters); d != "" {
		t.Errorf("letters by target (-want +got):\n%s", d)
	}
}

func scrape(t *testing.T, base string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
