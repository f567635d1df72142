package engine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
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
		if string(r.body) != `{"n":1}` || r.header.Get("Ce-Source") != "/test" || r.header.Get("Ce-Knativebrokerttl") != "255" {
			t.Errorf("delivered %q with headers %v", r.body, r.header)
		}
	}
	rec.mu.Unlock()
	src := e.currentPlan().byPath["/brokers/ns/b"]
	stream, err := e.js.Stream(context.Background(), src.names.inStream)
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
	src := e.currentPlan().byPath["/brokers/ns/b"]
	if _, err := e.js.PublishMsg(context.Background(), &nats.Msg{Subject: src.names.in, Header: batchHeader, Data: batch}); err != nil {
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

// TestAckPublisherOutcomes checks that every publish is called back once:
// with nil when JetStream stores it, and with an error when no stream takes
// the subject, when nothing answers before the deadline, and when the
// deadline has passed already.
func TestAckPublisherOutcomes(t *testing.T) {
	e := startEngine(t, Options{Table: brokerTable()})
	src := e.currentPlan().byPath["/brokers/ns/b"]
	// A plain subscriber that never answers.
	mute, err := e.nc.SubscribeSync("mute.subject")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = mute.Unsubscribe() }()
	tests := []struct {
		name     string
		subject  string
		deadline time.Duration
		wantErr  string
	}{
		{name: "stored", subject: src.names.in, deadline: 5 * time.Second},
		{name: "no stream", subject: "no.stream.here", deadline: 400 * time.Millisecond, wantErr: "503"},
		{name: "no answer", subject: "mute.subject", deadline: 200 * time.Millisecond, wantErr: errPublishTimeout.Error()},
		{name: "deadline passed", subject: src.names.in, deadline: -time.Second, wantErr: errPublishTimeout.Error()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := make(chan error, 2)
			e.acks.publish(&nats.Msg{Subject: tt.subject, Header: batchHeader}, time.Now().Add(tt.deadline), func(a ackOutcome) { calls <- a.err })
			var got error
			select {
			case got = <-calls:
			case <-time.After(10 * time.Second):
				t.Fatal("no outcome after 10s")
			}
			switch {
			case tt.wantErr == "" && got != nil:
				t.Errorf("outcome %v, want success", got)
			case tt.wantErr != "" && (got == nil || !strings.Contains(got.Error(), tt.wantErr)):
				t.Errorf("outcome %v, want an error with %q", got, tt.wantErr)
			}
			select {
			case again := <-calls:
				t.Errorf("called back twice, the second time with %v", again)
			case <-time.After(300 * time.Millisecond):
			}
		})
	}
}

func TestAckError(t *testing.T) {
	tests := []struct {
		name string
		msg  *nats.Msg
		want string // the error's text up to its end or to "*"
	}{
		{"ack", &nats.Msg{Data: []byte(`{"stream":"s","seq":3}`)}, ""},
		{"duplicate", &nats.Msg{Data: []byte(`{"stream":"s","seq":3,"duplicate":true}`)}, ""},
		{"error", &nats.Msg{Data: []byte(`{"error":{"code":503,"err_code":10077,"description":"maximum bytes exceeded"}}`)}, "publishing to JetStream: maximum bytes exceeded (code 503, error 10077)"},
		{"status", &nats.Msg{Header: nats.Header{"Status": {"503"}}}, "publishing to JetStream: status 503 "},
		{"empty", &nats.Msg{}, "publishing to JetStream: empty acknowledgement"},
		{"garbage", &nats.Msg{Data: []byte(`"error"`)}, "publishing to JetStream: unreadable acknowledgement: *"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got string
			if err := ackError(tt.msg); err != nil {
				got = err.Error()
			}
			if prefix, ok := strings.CutSuffix(tt.want, "*"); ok && strings.HasPrefix(got, prefix) {
				return
			}
			if got != tt.want {
				t.Errorf("ackError = %q, want %q", got, tt.want)
			}
		})
	}
}

// BenchmarkIngressRecord measures what the ingress does to an event between
// reading the request and handing it to its batch: parse it, give it a
// TTL, encode its record.
func BenchmarkIngressRecord(b *testing.B) {
	body := []byte(`{"order":42,"items":["a","b"]}`)
	req, err := http.NewRequest(http.MethodPost, "http://x/brokers/ns/b", nil)
	if err != nil {
		b.Fatal(err)
	}
	req.Header = http.Header{
		"Ce-Specversion": {"1.0"}, "Ce-Id": {"12345"}, "Ce-Source": {"/loadgen"},
		"Ce-Type": {"com.example.order"}, "Ce-Loadsent": {"1700000000000000000"}, "Content-Type": {"application/json"},
	}
	var buf []byte
	b.ReportAllocs()
	for b.Loop() {
		req.Body = io.NopCloser(bytes.NewReader(body))
		req.ContentLength = int64(len(body))
		ev, err := cehttp.ReadRequest(req, DefaultMaxBodyBytes)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := ttlOf(ev); !ok {
			ev.SetExtension(ExtensionTTL, int32(DefaultTTL))
		}
		buf, err = cehttp.AppendEventRecord(buf[:0], ev, headerAccepted, "1700000000000000000")
		if err != nil {
			b.Fatal(err)
		}
	}
}
