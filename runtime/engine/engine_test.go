package engine

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
)

// recorder is a subscriber that records what it receives.
type recorder struct {
	mu     sync.Mutex
	events []received
	srv    *httptest.Server
	// respond, when set, answers instead of 202.
	respond func(w http.ResponseWriter, r *http.Request, n int)
}

type received struct {
	header http.Header
	body   []byte
	at     time.Time
}

func newRecorder(t *testing.T) *recorder {
	rec := &recorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		rec.mu.Lock()
		rec.events = append(rec.events, received{header: r.Header.Clone(), body: body, at: time.Now()})
		n := len(rec.events)
		respond := rec.respond
		rec.mu.Unlock()
		if respond != nil {
			respond(w, r, n)
			return
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *recorder) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.events)
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var ids []string
	for _, e := range r.events {
		ids = append(ids, e.header.Get("Ce-Id"))
	}
	return ids
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

func testLogger(t *testing.T) *slog.Logger {
	if os.Getenv("KNC_TEST_LOG") != "" {
		return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	return nil
}

func startEngine(t *testing.T, opts Options) *Engine {
	t.Helper()
	if opts.DataDir == "" {
		opts.DataDir = t.TempDir()
	}
	if opts.HTTPAddr == "" {
		opts.HTTPAddr = "127.0.0.1:0"
	}
	if opts.Logger == nil {
		opts.Logger = testLogger(t)
	}
	e, err := New(opts)
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
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"n":1}`))
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
	return resp.StatusCode
}

func TestDeliversToMatchingTrigger(t *testing.T) {
	sub := newRecorder(t)
	other := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(
		trigger("a", sub.srv.URL, map[string]string{"type": "a"}),
		trigger("b", other.srv.URL, map[string]string{"type": "b"}),
	)})
	for i := range 5 {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("a", i), "a"); code != http.StatusAccepted {
			t.Fatalf("POST = %d, want 202", code)
		}
	}
	eventually(t, 10*time.Second, "5 deliveries", func() bool { return sub.count() == 5 })
	if n := other.count(); n != 0 {
		t.Errorf("trigger b got %d events of type a", n)
	}
}

// TestLargeEvent checks that an event near the body limit passes through
// NATS, whose default message limit is smaller.
func TestLargeEvent(t *testing.T) {
	sub := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("a", sub.srv.URL, nil))})
	body := strings.Repeat("0123456789abcdef", (3<<20)/16)
	req, err := http.NewRequest(http.MethodPost, e.URL()+"/brokers/ns/b", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", "large")
	req.Header.Set("Ce-Source", "/test")
	req.Header.Set("Ce-Type", "t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST of 3 MiB = %d, want 202", resp.StatusCode)
	}
	eventually(t, 10*time.Second, "the large event", func() bool { return sub.count() == 1 })
	sub.mu.Lock()
	defer sub.mu.Unlock()
	if got := string(sub.events[0].body); got != body {
		t.Errorf("delivered body of %d bytes differs from the %d sent", len(got), len(body))
	}
}
