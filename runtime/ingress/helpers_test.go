package ingress_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/engine"
)

// The ingress is tested through a whole runtime: a real embedded NATS
// server behind it and real subscribers after it.

// recorder is a subscriber that counts what it receives.
type recorder struct {
	mu     sync.Mutex
	events int
	srv    *httptest.Server
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rec.mu.Lock()
		rec.events++
		rec.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.events
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func startEngine(t *testing.T, opts engine.Options) *engine.Engine {
	t.Helper()
	opts.DataDir = t.TempDir()
	opts.HTTPAddr = "127.0.0.1:0"
	if os.Getenv("KNC_TEST_LOG") != "" {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	e, err := engine.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := e.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return e
}

func brokerTable(triggers ...routing.Trigger) *routing.Table {
	return &routing.Table{
		APIVersion: routing.APIVersion, Kind: routing.Kind,
		Brokers: []routing.Broker{{
			Source:   routing.Source{Namespace: "ns", Name: "b"},
			Path:     routing.BrokerPath("ns", "b"),
			Triggers: triggers,
		}},
	}
}

func trigger(name, uri string, attrs map[string]string) routing.Trigger {
	return routing.Trigger{Source: routing.Source{Namespace: "ns", Name: name}, Attributes: attrs, Subscriber: routing.Destination{URI: uri}}
}

func post(t testing.TB, url, id, typ string) int {
	t.Helper()
	return postEvent(t, url, id, typ, strings.NewReader(`{"n":1}`)).StatusCode
}

// postEvent sends a binary-mode event with body as its data and returns
// the answer, its body read and closed. A body of unknown length goes
// chunked.
func postEvent(t testing.TB, url, id, typ string, body io.Reader) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "/test")
	req.Header.Set("Ce-Type", typ)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp
}

// counter sums every sample of a counter in reg.
func counter(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			sum += m.GetCounter().GetValue()
		}
	}
	return sum
}
