package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

const testAdminToken = "s3cret-admin-token"

// callAPI calls the kept-letter API of e with token ("" for none) and
// decodes its JSON answer into out, returning the status code.
func callAPI(t *testing.T, e *Engine, method, path, token string, in, out any) int {
	t.Helper()
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		body = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.AdminURL()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode == http.StatusOK && out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, b)
		}
	}
	return resp.StatusCode
}

func listLetters(t *testing.T, e *Engine, f kept.Filter) []kept.Letter {
	t.Helper()
	var res kept.ListResult
	if code := callAPI(t, e, http.MethodGet, kept.PathLetters+"?"+f.Query().Encode(), testAdminToken, nil, &res); code != http.StatusOK {
		t.Fatalf("listing letters: status %d", code)
	}
	return res.Letters
}

// TestFailedDeliveriesAreKeptAndReplayed fails 100 deliveries of one
// Trigger (400s and timeouts, no dead-letter sink), lists them through
// the admin API, fixes the subscriber and replays them by filter: all 100
// reach it, none reaches the Broker's other Trigger, and a second replay
// sends nothing.
func TestFailedDeliveriesAreKeptAndReplayed(t *testing.T) {
	const events = 100
	var broken atomic.Bool
	broken.Store(true)
	fixable := newRecorder(t)
	var okMu sync.Mutex
	okAt := map[string]bool{}
	fixable.respond = func(w http.ResponseWriter, r *http.Request, _ int) {
		if broken.Load() {
			var n int
			fmt.Sscanf(r.Header.Get("Ce-Id"), "e%d", &n)
			if n%2 == 0 {
				w.WriteHeader(http.StatusBadRequest)
				return
			}
			// Longer than the Trigger's timeout.
			select {
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		okMu.Lock()
		okAt[r.Header.Get("Ce-Id")] = true
		okMu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}
	other := newRecorder(t)
	fix := trigger("fixable", fixable.srv.URL, map[string]string{"type": "t"})
	fix.Delivery = &routing.Delivery{Timeout: routing.Duration(200 * time.Millisecond)}
	e := startEngine(t, Options{
		Table:        brokerTable(fix, trigger("other", other.srv.URL, map[string]string{"type": "t"})),
		AdminAddr:    "127.0.0.1:0",
		BearerTokens: ingress.BearerTokens{ingress.AdminTokenPath: {testAdminToken}},
	})
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST = %d, want 202", code)
		}
	}
	eventually(t, 60*time.Second, "every failed delivery to be kept", func() bool {
		return accountOf(t, e)["trigger/fixable"].Kept[kept.ReasonNoDeadLetterSink] == events
	})

	for _, token := range []string{"", "wrong"} {
		if code := callAPI(t, e, http.MethodGet, kept.PathLetters, token, nil, nil); code != http.StatusUnauthorized {
			t.Errorf("listing with token %q: status %d, want 401", token, code)
		}
		if code := callAPI(t, e, http.MethodPost, kept.PathReplay, token, kept.ReplayRequest{}, nil); code != http.StatusUnauthorized {
			t.Errorf("replaying with token %q: status %d, want 401", token, code)
		}
	}
	if resp, err := http.Get(e.URL() + kept.PathLetters); err != nil {
		t.Fatal(err)
	} else if resp.Body.Close(); resp.StatusCode != http.StatusNotFound {
		t.Errorf("the ingress listener answers %s with %d, want 404", kept.PathLetters, resp.StatusCode)
	}

	letters := listLetters(t, e, kept.Filter{TargetKind: "Trigger", Target: "fixable"})
	if len(letters) != events {
		t.Fatalf("%d letters listed, want %d", len(letters), events)
	}
	statuses := map[int]int{}
	for _, l := range letters {
		statuses[l.Status]++
		if l.Reason != kept.ReasonNoDeadLetterSink || l.Source != "ns/b" || l.Attempts != 1 || l.Event.Type != "t" || l.Data != "" {
			t.Errorf("letter %+v: want reason %s, source ns/b, 1 attempt, type t, no data in a list", l, kept.ReasonNoDeadLetterSink)
		}
		if l.Status == 0 && l.Error == "" {
			t.Errorf("letter %s of a timeout has no error", l.ID)
		}
		if l.KnativeError["knativeerrorcode"] == "" {
			t.Errorf("letter %s has no knativeerrorcode", l.ID)
		}
	}
	if statuses[http.StatusBadRequest] != events/2 || statuses[0] != events/2 {
		t.Errorf("statuses of the letters: %v, want %d of 400 and %d without an answer", statuses, events/2, events/2)
	}
	var one kept.Letter
	if code := callAPI(t, e, http.MethodGet, kept.PathLetters+"/"+letters[0].ID, testAdminToken, nil, &one); code != http.StatusOK || one.Data == "" {
		t.Errorf("showing %s: status %d, data %q; want 200 and the data", letters[0].ID, code, one.Data)
	}

	var dry kept.ReplayResult
	callAPI(t, e, http.MethodPost, kept.PathReplay, testAdminToken, kept.ReplayRequest{Filter: kept.Filter{Target: "fixable"}, DryRun: true}, &dry)
	if len(dry.Replayed) != events {
		t.Errorf("a dry run would replay %d letters, want %d", len(dry.Replayed), events)
	}
	broken.Store(false)
	var res kept.ReplayResult
	if code := callAPI(t, e, http.MethodPost, kept.PathReplay, testAdminToken, kept.ReplayRequest{Filter: kept.Filter{Target: "fixable"}, PerSecond: 1000}, &res); code != http.StatusOK {
		t.Fatalf("replay: status %d", code)
	}
	if len(res.Replayed) != events || len(res.Skipped) != 0 {
		t.Fatalf("replayed %d, skipped %v; want %d replayed", len(res.Replayed), res.Skipped, events)
	}
	eventually(t, 60*time.Second, "the fixed subscriber to accept every replayed event", func() bool {
		okMu.Lock()
		defer okMu.Unlock()
		return len(okAt) == events
	})
	eventually(t, 30*time.Second, "the replayed deliveries to be counted delivered", func() bool {
		return accountOf(t, e)["trigger/fixable"].Delivered == events
	})

	var again kept.ReplayResult
	callAPI(t, e, http.MethodPost, kept.PathReplay, testAdminToken, kept.ReplayRequest{Filter: kept.Filter{Target: "fixable"}}, &again)
	if len(again.Replayed) != 0 || len(again.Skipped) != events {
		t.Errorf("a second replay replayed %d and skipped %d, want 0 and %d", len(again.Replayed), len(again.Skipped), events)
	}

	got := accountOf(t, e)
	if o := got["trigger/other"]; o.Accepted != events || o.Delivered != events || other.count() != events {
		t.Errorf("the other Trigger: %+v, %d requests; want %d accepted, delivered and received", o, other.count(), events)
	}
	for key, o := range got {
		if o.Accepted != o.settled() {
			t.Errorf("%s: accepted %v != delivered %v + dead-lettered %v + kept %v + dropped %v", key, o.Accepted, o.Delivered, o.DeadLettered, o.Kept, o.Dropped)
		}
	}
	if o := got["trigger/fixable"]; o.Accepted != 2*events {
		t.Errorf("fixable: accepted %v, want %d: each replay is a delivery", o.Accepted, 2*events)
	}
	if n := testutilCounterWith(e, "knc_deliveries_replayed_total", "target", "fixable"); n != events {
		t.Errorf("knc_deliveries_replayed_total = %v, want %d", n, events)
	}

	var purged kept.PurgeResult
	callAPI(t, e, http.MethodPost, kept.PathPurge, testAdminToken, kept.PurgeRequest{Filter: kept.Filter{Namespace: "ns"}}, &purged)
	if len(purged.Purged) != events || len(listLetters(t, e, kept.Filter{})) != 0 {
		t.Errorf("purged %d letters, want %d and none left", len(purged.Purged), events)
	}
	if n := testutilCounterWith(e, "knc_kept_letters_purged_total", "target", "fixable"); n != events {
		t.Errorf("knc_kept_letters_purged_total = %v, want %d", n, events)
	}
}

// TestFullStoreOfKeptLettersEvictsTheOldest overfills the store of kept
// letters: the oldest are evicted and counted, the ingress keeps
// answering 202, and every letter is accounted for.
func TestFullStoreOfKeptLettersEvictsTheOldest(t *testing.T) {
	const events = 200
	failing := newRecorder(t)
	failing.respond = answer(http.StatusBadRequest)
	e := startEngine(t, Options{
		Table:        brokerTable(trigger("failing", failing.srv.URL, map[string]string{"type": "t"})),
		AdminAddr:    "127.0.0.1:0",
		BearerTokens: ingress.BearerTokens{ingress.AdminTokenPath: {testAdminToken}},
		KeptMaxBytes: 32 << 10,
	})
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST %d = %d, want 202", i, code)
		}
	}
	eventually(t, 60*time.Second, "every delivery to be kept", func() bool {
		return accountOf(t, e)["trigger/failing"].Kept[kept.ReasonNoDeadLetterSink] == events
	})
	o := accountOf(t, e)["trigger/failing"]
	full := o.Dropped[metrics.DropKeptLettersFull]
	held := len(listLetters(t, e, kept.Filter{}))
	if full == 0 || held == 0 {
		t.Fatalf("%d letters held, %v evicted; want both above 0", held, full)
	}
	if float64(held)+full != events {
		t.Errorf("%d letters held + %v evicted != %d kept", held, full, events)
	}
	if o.Accepted != o.settled() {
		t.Errorf("accepted %v != settled %v: %+v", o.Accepted, o.settled(), o)
	}
}

// TestExpiredKeptLettersAreCounted removes the letters older than the age
// limit and counts each as expired for its Trigger.
func TestExpiredKeptLettersAreCounted(t *testing.T) {
	const events = 5
	failing := newRecorder(t)
	failing.respond = answer(http.StatusBadRequest)
	e := startEngine(t, Options{
		Table:      brokerTable(trigger("failing", failing.srv.URL, map[string]string{"type": "t"})),
		AdminAddr:  "127.0.0.1:0",
		KeptMaxAge: time.Millisecond,
	})
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST = %d", code)
		}
	}
	eventually(t, 30*time.Second, "every delivery to be kept", func() bool {
		return accountOf(t, e)["trigger/failing"].Kept[kept.ReasonNoDeadLetterSink] == events
	})
	eventually(t, 30*time.Second, "the letters to be a millisecond old", func() bool {
		return time.Since(listLetters(t, e, kept.Filter{})[events-1].KeptAt) > time.Millisecond
	})
	if err := e.keeper.sweep(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := len(listLetters(t, e, kept.Filter{})); n != 0 {
		t.Errorf("%d letters left after the sweep, want 0", n)
	}
	if n := testutilCounterWith(e, "knc_kept_letters_expired_total", "target", "failing"); n != events {
		t.Errorf("knc_kept_letters_expired_total = %v, want %d", n, events)
	}
}

// TestDeadLetteredCopiesAreKept: a Trigger with keepDeadLettered (the
// annotation knc.dev/keep-dead-lettered) keeps a copy of each delivery its
// dead-letter sink accepted, with the failure that sent it there; a
// Trigger without it keeps none. The deliveries stay counted
// dead-lettered, and the accounting balances.
func TestDeadLetteredCopiesAreKept(t *testing.T) {
	const events = 10
	failing := newRecorder(t)
	failing.respond = answer(http.StatusBadRequest)
	sink := newRecorder(t)
	withSink := func(tr routing.Trigger) routing.Trigger {
		tr.Delivery = &routing.Delivery{DeadLetterSink: &routing.Destination{URI: sink.srv.URL}}
		return tr
	}
	copied := withSink(trigger("copied", failing.srv.URL+"/copied", map[string]string{"type": "t"}))
	copied.KeepDeadLettered = true
	e := startEngine(t, Options{
		Table:        brokerTable(copied, withSink(trigger("plain", failing.srv.URL+"/plain", map[string]string{"type": "t"}))),
		AdminAddr:    "127.0.0.1:0",
		BearerTokens: ingress.BearerTokens{ingress.AdminTokenPath: {testAdminToken}},
	})
	for i := range events {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST = %d, want 202", code)
		}
	}
	eventually(t, 60*time.Second, "every delivery to be dead-lettered", func() bool {
		got := accountOf(t, e)
		return got["trigger/copied"].DeadLettered == events && got["trigger/plain"].DeadLettered == events
	})
	got := accountOf(t, e)
	if n := got["trigger/copied"].Kept[kept.ReasonDeadLettered]; n != events {
		t.Errorf("copied: kept{reason=%s} = %v, want %d", kept.ReasonDeadLettered, n, events)
	}
	if n := len(got["trigger/plain"].Kept); n != 0 {
		t.Errorf("plain: kept %v, want nothing: it does not ask for copies", got["trigger/plain"].Kept)
	}
	for key, o := range got {
		if o.Accepted != o.settled() {
			t.Errorf("%s: accepted %v != settled %v: %+v", key, o.Accepted, o.settled(), o)
		}
	}
	letters := listLetters(t, e, kept.Filter{})
	if len(letters) != events {
		t.Fatalf("%d letters, want %d, all of Trigger copied", len(letters), events)
	}
	for _, l := range letters {
		if l.Target != "copied" || l.Reason != kept.ReasonDeadLettered || l.Status != http.StatusBadRequest ||
			l.Destination != failing.srv.URL+"/copied" || l.KnativeError["knativeerrorcode"] != "400" {
			t.Errorf("letter %+v: want Trigger copied, reason %s, status 400 from %s", l, kept.ReasonDeadLettered, failing.srv.URL+"/copied")
		}
		if _, ok := l.Event.Extensions["knativeerrorcode"]; ok {
			t.Errorf("letter %s keeps the knativeerror* extensions in its event; a replay would send them to the subscriber", l.ID)
		}
	}
}

// TestRepliesBeyondTheirTTLAreKept: a Trigger whose subscriber replies to
// every event with an event it matches again loops until the TTL is
// exhausted; the last reply is kept as a letter of the Trigger, reason
// ttl, beside the delivery's outcome (delivered). A replay sends it to the
// Broker only with --reset-ttl, where it loops again and is kept again.
func TestRepliesBeyondTheirTTLAreKept(t *testing.T) {
	loop := newRecorder(t)
	loop.respond = func(w http.ResponseWriter, _ *http.Request, n int) {
		w.Header().Set("Ce-Specversion", "1.0")
		w.Header().Set("Ce-Id", fmt.Sprint("reply-", n))
		w.Header().Set("Ce-Source", "/loop")
		w.Header().Set("Ce-Type", "t")
		w.WriteHeader(http.StatusOK)
	}
	e := startEngine(t, Options{
		Table:        brokerTable(trigger("loop", loop.srv.URL, map[string]string{"type": "t"})),
		AdminAddr:    "127.0.0.1:0",
		BearerTokens: ingress.BearerTokens{ingress.AdminTokenPath: {testAdminToken}},
		DefaultTTL:   3,
	})
	if code := post(t, e.URL()+"/brokers/ns/b", "start", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d, want 202", code)
	}
	eventually(t, 30*time.Second, "the reply beyond the TTL to be kept", func() bool {
		return accountOf(t, e)["trigger/loop"].Kept[kept.ReasonTTL] == 1
	})
	o := accountOf(t, e)["trigger/loop"]
	if o.Accepted != o.Delivered || o.Accepted != o.settled() || o.Accepted == 0 {
		t.Errorf("accounting %+v: every delivery of the loop was delivered, and the kept reply is no outcome", o)
	}
	if n := testutilCounterWith(e, "knc_events_dropped_total", "reason", kept.ReasonTTL); n != 0 {
		t.Errorf("knc_events_dropped_total{reason=ttl} = %v, want 0: the reply is kept", n)
	}
	letters := listLetters(t, e, kept.Filter{Reason: kept.ReasonTTL})
	if len(letters) != 1 || letters[0].Target != "loop" || letters[0].Event.Source != "/loop" {
		t.Fatalf("letters %+v, want the loop's last reply, of Trigger loop", letters)
	}
	seen := loop.count()

	var res kept.ReplayResult
	callAPI(t, e, http.MethodPost, kept.PathReplay, testAdminToken, kept.ReplayRequest{Filter: kept.Filter{Reason: kept.ReasonTTL}}, &res)
	if len(res.Replayed) != 0 || len(res.Skipped) != 1 {
		t.Errorf("a replay without a fresh TTL replayed %v and skipped %v; want it skipped", res.Replayed, res.Skipped)
	}
	callAPI(t, e, http.MethodPost, kept.PathReplay, testAdminToken, kept.ReplayRequest{Filter: kept.Filter{Reason: kept.ReasonTTL}, ResetTTL: true}, &res)
	if len(res.Replayed) != 1 {
		t.Fatalf("a replay with a fresh TTL replayed %v, skipped %v; want it replayed", res.Replayed, res.Skipped)
	}
	eventually(t, 30*time.Second, "the replayed reply to loop again and be kept again", func() bool {
		return accountOf(t, e)["trigger/loop"].Kept[kept.ReasonTTL] == 2
	})
	if loop.count() <= seen {
		t.Errorf("the subscriber saw %d requests after the replay, %d before: the replay reached no Trigger", loop.count(), seen)
	}
	// The replay went into the Broker: the Trigger counts it replayed,
	// and its accounting still balances once the loop settles.
	eventually(t, 30*time.Second, "the Trigger's accounting to balance after the replay", func() bool {
		o := accountOf(t, e)["trigger/loop"]
		return o.Accepted == o.settled() && o.Replayed == 1
	})
}

// answerlessJetStream answers the first few stream lookups as JetStream's
// API does while a clustered stream has no leader: no responders.
type answerlessJetStream struct {
	jetstream.JetStream
	unanswered atomic.Int32
}

func (j *answerlessJetStream) Stream(ctx context.Context, name string) (jetstream.Stream, error) {
	if j.unanswered.Add(-1) >= 0 {
		return nil, nats.ErrNoResponders
	}
	return j.JetStream.Stream(ctx, name)
}

// TestKeptLettersAreReadAgainWhileJetStreamHasNoResponder: reading the
// letters while the stream's cluster elects a leader waits for it rather
// than failing the list or the replay.
func TestKeptLettersAreReadAgainWhileJetStreamHasNoResponder(t *testing.T) {
	failing := newRecorder(t)
	failing.respond = answer(http.StatusBadRequest)
	e := startEngine(t, Options{
		Table:        brokerTable(trigger("failing", failing.srv.URL, map[string]string{"type": "t"})),
		AdminAddr:    "127.0.0.1:0",
		BearerTokens: ingress.BearerTokens{ingress.AdminTokenPath: {testAdminToken}},
	})
	if code := post(t, e.URL()+"/brokers/ns/b", "e1", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d, want 202", code)
	}
	eventually(t, 60*time.Second, "the delivery to be kept", func() bool {
		return accountOf(t, e)["trigger/failing"].Kept[kept.ReasonNoDeadLetterSink] == 1
	})
	js := &answerlessJetStream{JetStream: e.js}
	js.unanswered.Store(3)
	k := newKeeper(js, e.acks, e.metrics, &e.opts)
	letters, err := k.scan(t.Context(), kept.Filter{}, false)
	if err != nil {
		t.Fatalf("reading the letters: %v", err)
	}
	if len(letters) != 1 || letters[0].letter.Event.ID != "e1" {
		t.Errorf("read %d letters (%+v), want the one of e1", len(letters), letters)
	}
}
