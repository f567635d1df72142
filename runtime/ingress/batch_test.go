package ingress

import (
	"bytes"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

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
