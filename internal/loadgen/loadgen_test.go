package loadgen

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestReadResponse(t *testing.T) {
	tests := []struct {
		name      string
		raw       string
		wantCode  int
		wantReuse bool
		wantErr   bool
		wantRest  string
	}{
		{name: "content length", raw: "HTTP/1.1 202 Accepted\r\nContent-Length: 3\r\n\r\nabcNEXT", wantCode: 202, wantReuse: true, wantRest: "NEXT"},
		{name: "no body", raw: "HTTP/1.1 204 No Content\r\n\r\nNEXT", wantCode: 204, wantReuse: true, wantRest: "NEXT"},
		{name: "chunked", raw: "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\nNEXT", wantCode: 200, wantReuse: true, wantRest: "NEXT"},
		{name: "close", raw: "HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", wantCode: 503, wantReuse: false},
		{name: "http 1.0", raw: "HTTP/1.0 202 Accepted\r\nContent-Length: 0\r\n\r\n", wantCode: 202, wantReuse: false},
		{name: "garbage", raw: "hello\r\n\r\n", wantErr: true},
		{name: "bad length", raw: "HTTP/1.1 202 Accepted\r\nContent-Length: x\r\n\r\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := bufio.NewReader(strings.NewReader(tt.raw))
			code, reuse, err := readResponse(r)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr {
				return
			}
			rest, _ := io.ReadAll(r)
			got := []any{code, reuse, string(rest)}
			want := []any{tt.wantCode, tt.wantReuse, tt.wantRest}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(code, reuse, rest) (-want +got):\n%s", diff)
			}
		})
	}
}

// TestRunAgainstNetHTTP checks that what the raw client sends is what a
// net/http server reads, and that every request in the window is counted.
func TestRunAgainstNetHTTP(t *testing.T) {
	var mu sync.Mutex
	var bad []string
	var served int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		served++
		for _, h := range []string{"Ce-Id", "Ce-Source", "Ce-Specversion", "Ce-Loadsent", "Ce-Extra"} {
			if r.Header.Get(h) == "" {
				bad = append(bad, "missing "+h)
			}
		}
		if r.Header.Get("Ce-Type") != "t1" && r.Header.Get("Ce-Type") != "t2" {
			bad = append(bad, "type "+r.Header.Get("Ce-Type"))
		}
		if string(body) != string(DefaultBody) || r.URL.Path != "/brokers/ns/b" {
			bad = append(bad, "body or path "+string(body)+" "+r.URL.Path)
		}
		mu.Unlock()
		if r.Header.Get("Ce-Type") == "t2" {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	ext := map[string]string{"extra": "x"}
	r, err := Run(context.Background(), Config{
		URL:         srv.URL + "/brokers/ns/b",
		Connections: 4,
		Duration:    200 * time.Millisecond,
		Events:      []Event{{Type: "t1", Extensions: ext}, {Type: "t2", Extensions: ext}},
	})
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(bad) > 0 {
		t.Fatalf("the server read %d bad requests, the first: %s", len(bad), bad[0])
	}
	if r.Requests == 0 || int(r.Requests) > served {
		t.Fatalf("Requests = %d, served = %d", r.Requests, served)
	}
	if r.Errors == 0 || r.Status[503] != r.Errors || r.Status[202]+r.Errors != r.Requests {
		t.Errorf("Status = %v, Errors = %d, Requests = %d", r.Status, r.Errors, r.Requests)
	}
	if len(r.Latency) != int(r.Requests) || r.Latency.Percentile(50) <= 0 {
		t.Errorf("%d latencies for %d requests, p50 %v", len(r.Latency), r.Requests, r.Latency.Percentile(50))
	}
}

func TestOpenLoopRate(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	r, err := Run(context.Background(), Config{URL: srv.URL, Connections: 4, Rate: 500, Warmup: 100 * time.Millisecond, Duration: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// A fixed schedule sends about Rate per second, never much more.
	if got := r.PerSecond(); got < 300 || got > 600 {
		t.Errorf("%.0f requests/s at a rate of 500", got)
	}
}

func TestSlowRequestsAreListed(t *testing.T) {
	const delay = 30 * time.Millisecond
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Ce-Type") == "slow" {
			time.Sleep(delay)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	cfg := Config{URL: srv.URL, Connections: 2, Duration: 300 * time.Millisecond, Events: []Event{{Type: "fast"}, {Type: "slow"}}}
	start := time.Now()
	r, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if r.Slow != nil {
		t.Errorf("without SlowOver, %d requests are listed as slow", len(r.Slow))
	}
	cfg.SlowOver = delay * 2 / 3
	r, err = Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	over := len(r.Latency) - sort.Search(len(r.Latency), func(i int) bool { return r.Latency[i] > cfg.SlowOver })
	if over == 0 || len(r.Slow) != over {
		t.Fatalf("%d requests took over %v, %d are listed as slow", over, cfg.SlowOver, len(r.Slow))
	}
	if !slices.IsSortedFunc(r.Slow, time.Time.Compare) {
		t.Error("the slow requests are not sorted by time")
	}
	if first, last := r.Slow[0], r.Slow[len(r.Slow)-1]; first.Before(start) || last.After(end) {
		t.Errorf("slow requests listed from %v to %v, outside the run from %v to %v", first, last, start, end)
	}
}

func TestSubscriberAndGate(t *testing.T) {
	sub, err := NewSubscriber()
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	gate := NewGate(2)
	sub.SetGate(gate)
	sub.Record()
	r, err := Run(context.Background(), Config{URL: sub.URL + "/any", Connections: 3, Duration: 200 * time.Millisecond, Gate: gate})
	if err != nil {
		t.Fatal(err)
	}
	if r.Errors != 0 || r.Requests == 0 {
		t.Fatalf("Requests %d, Errors %d (%v)", r.Requests, r.Errors, r.FirstError)
	}
	if !sub.WaitFor(r.Requests, time.Now().Add(5*time.Second)) {
		t.Fatalf("received %d of at least %d", sub.Received(), r.Requests)
	}
	if !gate.WaitIdle(time.Now().Add(5 * time.Second)) {
		t.Fatal("units are still out after every delivery")
	}
	lat := sub.Latencies()
	if len(lat) < int(r.Requests) || lat.Percentile(99) <= 0 {
		t.Errorf("%d latencies for %d requests", len(lat), r.Requests)
	}
}

func TestPercentile(t *testing.T) {
	l := Latencies{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}
	got := []time.Duration{l.Percentile(50), l.Percentile(90), l.Percentile(99), l.Percentile(100), Latencies(nil).Percentile(50)}
	if diff := cmp.Diff([]time.Duration{5, 9, 10, 10, 0}, got); diff != "" {
		t.Errorf("percentiles (-want +got):\n%s", diff)
	}
}

// TestGateCloseGivesBackPartialUnits checks that a request interrupted while
// taking several units gives back those it took.
func TestGateCloseGivesBackPartialUnits(t *testing.T) {
	g := NewGate(5)
	if !g.acquire(context.Background(), 3) {
		t.Fatal("could not take 3 of 5 units")
	}
	done := make(chan bool)
	go func() { done <- g.acquire(context.Background(), 3) }()
	g.Close()
	if <-done {
		t.Fatal("took 3 units when 2 were left and the gate closed")
	}
	g.Release(3)
	if !g.WaitIdle(time.Now().Add(time.Second)) {
		t.Errorf("%d of 5 units back", len(g.tokens))
	}
}
