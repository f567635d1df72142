package engine

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	cloudevents "github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/kept"
)

// fillLetters keeps n letters of 1 KiB of data for the first Trigger of
// e's first Broker, as many at once as the dispatch stage would.
func fillLetters(b *testing.B, e *Engine, n int) {
	b.Helper()
	src := e.currentPlan().Sources()[0]
	t := src.Targets()[0]
	kind, key := t.Describe()
	name := key[strings.IndexByte(key, '/')+1:]
	ctx := context.Background()
	var next atomic.Int64
	errs := make(chan error, 64)
	for range 64 {
		go func() {
			for {
				i := next.Add(1)
				if i > int64(n) {
					errs <- nil
					return
				}
				ev := cloudevents.New()
				ev.SetID(fmt.Sprint("bench-", i))
				ev.SetSource("/bench")
				ev.SetType("t")
				_ = ev.SetData("application/json", []byte(`{"pad":"`+strings.Repeat("x", 1000)+`"}`))
				m := cehttp.ToNATS(&ev, kept.Subject(src.Object().Namespace, src.Names().ID, t.Token()))
				kept.Stamp(m, kept.Destination{SourceKind: src.Kind().String(), Source: src.Object().Key(), SourceID: src.Names().ID,
					TargetKind: kind, Target: name, TargetToken: t.Token()},
					kept.Failure{Reason: kept.ReasonNoDeadLetterSink, Status: 400, Attempts: 1, Destination: "http://127.0.0.1/"}, time.Now())
				if _, err := e.keeper.Keep(ctx, src.Object().Namespace, m, fmt.Sprint("bench:", i)); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for range 64 {
		if err := <-errs; err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkKeepLetter measures what keeping a failed delivery costs: the
// time to store one letter of 1 KiB of data with 64 stored at once, and
// the bytes it takes in the store.
func BenchmarkKeepLetter(b *testing.B) {
	e := benchEngine(b, brokerTable(trigger("t", "http://127.0.0.1:1/", nil)))
	b.ResetTimer()
	fillLetters(b, e, b.N)
	b.StopTimer()
	s, err := e.js.Stream(context.Background(), kept.StreamName("ns"))
	if err != nil {
		b.Fatal(err)
	}
	info, err := s.Info(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(info.State.Bytes)/float64(info.State.Msgs), "bytes/letter")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "letters/s")
}

// BenchmarkReplay measures replay throughput: b.N kept letters replayed
// by filter without a rate bound, until their subscriber acknowledged
// every one.
func BenchmarkReplay(b *testing.B) {
	var got atomic.Int64
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		got.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	b.Cleanup(sub.Close)
	e := benchEngine(b, brokerTable(trigger("t", sub.URL, nil)))
	fillLetters(b, e, b.N)
	b.ResetTimer()
	res, err := e.replayLetters(context.Background(), kept.ReplayRequest{Filter: kept.Filter{Target: "t"}})
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Replayed) != b.N {
		b.Fatalf("replayed %d of %d", len(res.Replayed), b.N)
	}
	deadline := time.Now().Add(5 * time.Minute)
	for got.Load() < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d delivered", got.Load(), b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "letters/s")
}
