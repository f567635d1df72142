package engine

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/procstat"
	"github.com/knc-dev/knc/internal/routing"
)

// postLoop posts b.N binary-mode events to url from parallel clients and
// reports events/s and CPU µs per event (the whole process: client and
// server).
func postLoop(b *testing.B, url string) {
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	body := `{"order":42,"items":["a","b"]}`
	var seq atomic.Int64
	b.SetParallelism(4)
	b.ResetTimer()
	start, cpu := time.Now(), procstat.CPUTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
			req.Header.Set("Ce-Specversion", "1.0")
			req.Header.Set("Ce-Id", fmt.Sprint(seq.Add(1)))
			req.Header.Set("Ce-Source", "/bench")
			req.Header.Set("Ce-Type", "bench")
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				b.Errorf("POST = %d", resp.StatusCode)
				return
			}
		}
	})
	elapsed, used := time.Since(start), procstat.CPUTime()-cpu
	b.StopTimer()
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "events/s")
	b.ReportMetric(float64(used.Microseconds())/float64(b.N), "cpu-µs/event")
}

// BenchmarkIngress measures the durable ingress alone (parse, store in
// JetStream, wait for its acknowledgement, answer 202) against a plain
// net/http handler that reads the body and answers 202, in the same run.
func BenchmarkIngress(b *testing.B) {
	b.Run("plain-net-http", func(b *testing.B) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			_, _ = io.Copy(io.Discard, r.Body)
			w.WriteHeader(http.StatusAccepted)
		}))
		defer srv.Close()
		postLoop(b, srv.URL)
	})
	b.Run("knc", func(b *testing.B) {
		// A Broker without Triggers: the route stage drains the ingress
		// stream, nothing is delivered.
		e := benchEngine(b, brokerTable())
		postLoop(b, e.URL()+"/brokers/ns/b")
	})
}

// BenchmarkIngressToSubscriber measures events/s from the POST to the
// subscriber's 202 through one matching Trigger.
func BenchmarkIngressToSubscriber(b *testing.B) {
	var delivered atomic.Int64
	sub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		delivered.Add(1)
		w.WriteHeader(http.StatusAccepted)
	}))
	defer sub.Close()
	e := benchEngine(b, brokerTable(trigger("t", sub.URL, map[string]string{"type": "bench"})))
	start := time.Now()
	postLoop(b, e.URL()+"/brokers/ns/b")
	b.StartTimer()
	deadline := time.Now().Add(5 * time.Minute)
	for delivered.Load() < int64(b.N) {
		if time.Now().After(deadline) {
			b.Fatalf("%d of %d delivered", delivered.Load(), b.N)
		}
		time.Sleep(time.Millisecond)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "delivered/s")
}

func benchEngine(b *testing.B, t *routing.Table) *Engine {
	return benchEngineOpts(b, Options{Table: t})
}

func benchEngineOpts(b *testing.B, opts Options) *Engine {
	opts.DataDir, opts.HTTPAddr = b.TempDir(), "127.0.0.1:0"
	e, err := New(opts)
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = e.Shutdown(ctx)
	})
	return e
}
