package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/runtime/cehttp"
)

// TestConcurrentEventsShareBatches sends many events at once: they are
// stored in fewer messages than events, and each is delivered once, with
// its own attributes and payload.
func TestConcurrentEventsShareBatches(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"}))})
	const events = 200
	var wg sync.WaitGroup
	codes := make([]int, events)
	for i := range events {
		wg.Go(func() { codes[i] = post(t, e.URL()+"/brokers/ns/b", fmt.Sprint(i), "x") })
	}
	wg.Wait()
	for i, c := range codes {
		if c != http.StatusAccepted {
			t.Fatalf("event %d: POST = %d", i, c)
		}
	}
	eventually(t, 20*time.Second, "every event delivered", func() bool { return rec.count() >= events })
	var want []string
	for i := range events {
		want = append(want, fmt.Sprint(i))
	}
	got := rec.ids()
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("delivered ids (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	for _, r := range rec.events {
		if string(r.body) != `{"n":1}` || r.header.Get("Ce-Source") != "/test" || r.header.Get("Ce-Knativebrokerttl") != "" {
			t.Errorf("delivered %q with headers %v", r.body, r.header)
		}
	}
	rec.mu.Unlock()
	src := e.currentPlan().ForPath("/brokers/ns/b")
	stream, err := e.js.Stream(context.Background(), src.Names().InStream)
	if err != nil {
		t.Fatal(err)
	}
	if n := stream.CachedInfo().State.LastSeq; n >= events {
		t.Errorf("%d events took %d ingress messages: none was batched", events, n)
	}
}

// TestRouteBatchSkipsUnreadableEvents stores a batch by hand whose second
// event is invalid and whose end is cut: the valid events are delivered,
// the others dropped and counted.
func TestRouteBatchSkipsUnreadableEvents(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"}))})
	ev := func(id string) *event.Event {
		v := event.New()
		v.SetID(id)
		v.SetSource("/test")
		v.SetType("x")
		return &v
	}
	var batch []byte
	var err error
	batch, err = cehttp.AppendEventRecord(batch, ev("first"))
	if err != nil {
		t.Fatal(err)
	}
	// A record without the required source and type.
	batch, err = cehttp.AppendRecord(batch, nats.Header{"ce-specversion": {"1.0"}, "ce-id": {"bad"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	batch, err = cehttp.AppendEventRecord(batch, ev("third"))
	if err != nil {
		t.Fatal(err)
	}
	batch = append(batch, 1, 0, 5) // a record cut short
	src := e.currentPlan().ForPath("/brokers/ns/b")
	if _, err := e.js.PublishMsg(context.Background(), &nats.Msg{Subject: src.Names().In, Header: nats.Header{cehttp.HeaderBatch: {cehttp.BatchVersion}}, Data: batch}); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "two deliveries and two drops", func() bool {
		return rec.count() == 2 && testutilCounter(e, "knc_events_dropped_total") == 2
	})
	got := rec.ids()
	slices.Sort(got)
	if diff := cmp.Diff([]string{"first", "third"}, got); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}
