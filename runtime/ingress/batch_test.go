package ingress

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/runtime/cehttp"
)

// TestShardChoice checks that events fill the current shard while it has
// room and then move on to the next shard that has some.
func TestShardChoice(t *testing.T) {
	src := &Endpoint{}
	for range 3 {
		src.batchers = append(src.batchers, &batcher{})
	}
	full := func(i int) { src.batchers[i].inFlight = batchesInFlight }
	index := func(b *batcher) int { return slices.Index(src.batchers, b) }
	var got []int
	got = append(got, index(src.batcher()))
	full(0)
	got = append(got, index(src.batcher()), index(src.batcher()))
	full(1)
	got = append(got, index(src.batcher()))
	full(2)
	// Every shard is busy: the event waits in the current one.
	got = append(got, index(src.batcher()))
	src.batchers[0].inFlight = 0
	got = append(got, index(src.batcher()))
	if diff := cmp.Diff([]int{0, 1, 1, 2, 2, 0}, got); diff != "" {
		t.Errorf("shards chosen (-want +got):\n%s", diff)
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
		ev, err := cehttp.ReadRequest(req, 4<<20)
		if err != nil {
			b.Fatal(err)
		}
		if _, ok := TTL(ev); !ok {
			ev.SetExtension(ExtensionTTL, int32(255))
		}
		buf, err = cehttp.AppendEventRecord(buf[:0], ev, HeaderAccepted, "1700000000000000000")
		if err != nil {
			b.Fatal(err)
		}
	}
}

// heldStore keeps each publish until the test completes it.
type heldStore struct {
	mu      sync.Mutex
	pending []heldPublish
}

type heldPublish struct {
	subject string
	records int
	done    func(error, bool)
}

func (s *heldStore) Publish(m *nats.Msg, _ time.Time, done func(error, bool)) {
	records := 0
	for rest := m.Data; len(rest) > 0; records++ {
		_, _, next, err := cehttp.NextRecord(rest)
		if err != nil {
			panic(err)
		}
		rest = next
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pending = append(s.pending, heldPublish{subject: m.Subject, records: records, done: done})
}

func (s *heldStore) MaxPayload() int64 { return 1 << 20 }
func (s *heldStore) Fault() error      { return nil }

// take removes the publishes waiting for an acknowledgement.
func (s *heldStore) take() []heldPublish {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pending
	s.pending = nil
	return p
}

// TestShardsTakeTurnsToCommit checks OneCommitAcrossShards: one batch of
// an endpoint is stored at a time; the events that arrive meanwhile
// gather in one batch on the next shard, which is stored once the first
// is acknowledged.
func TestShardsTakeTurnsToCommit(t *testing.T) {
	st := &heldStore{}
	s := &Server{cfg: Config{OneCommitAcrossShards: true, PublishTimeout: time.Minute}, store: st, batchers: map[string]*batcher{}}
	ep := s.Endpoint(true, "ns/b", "/brokers/ns/b", []string{"a", "b", "c"}, prometheus.NewCounter(prometheus.CounterOpts{Name: "accepted"}))
	add := func(id string) *batch {
		ev := event.New()
		ev.SetID(id)
		ev.SetSource("/test")
		ev.SetType("t")
		bt, err := ep.batcher().store(&ev, time.Now(), "")
		if err != nil {
			t.Fatal(err)
		}
		return bt
	}
	type sent struct {
		Subject string
		Records int
	}
	var got [][]sent
	// stored notes what was sent since the last call, and returns it to
	// be acknowledged later.
	stored := func() []heldPublish {
		p := st.take()
		var s []sent
		for _, h := range p {
			s = append(s, sent{h.subject, h.records})
		}
		got = append(got, s)
		return p
	}
	ack := func(p []heldPublish) {
		for _, h := range p {
			h.done(nil, false)
		}
	}
	first := add("1")
	a := stored() // a stores 1 alone
	second, third := add("2"), add("3")
	stored() // nothing: b gathers 2 and 3 while a's batch is stored
	ack(a)
	b := stored() // b stores 2 and 3 together
	add("4")
	stored() // c gathers 4 while b's batch is stored
	ack(b)
	ack(stored()) // c stores 4
	want := [][]sent{{{"a", 1}}, nil, {{"b", 2}}, nil, {{"c", 1}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("batches stored at each step (-want +got):\n%s", diff)
	}
	for i, bt := range []*batch{first, second, third} {
		select {
		case <-bt.done:
		default:
			t.Errorf("event %d: its batch was not completed", i+1)
		}
	}
}
