package ingress_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
)

// TestStartingAnswers503 sends an event to a Broker's path before the
// routes are set up, as clients did during the 5 to 15 ms of a restart:
// the answer must be 503 with the configured Retry-After, which a client
// retries, and never 404, which tells it the Broker does not exist. Once
// started, the same request is accepted and an unknown path is a 404; once
// shut down, the Broker's path answers 503 with that Retry-After again.
func TestStartingAnswers503(t *testing.T) {
	rec := newRecorder(t)
	e, err := engine.New(engine.Options{
		Table:    brokerTable(trigger("t", rec.srv.URL, nil)),
		DataDir:  t.TempDir(),
		HTTPAddr: "127.0.0.1:0",
		Limits:   ingress.Limits{RetryAfter: 3 * time.Second},
	})
	if err != nil {
		t.Fatal(err)
	}
	send := func(path string) *http.Response {
		req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(`{"n":1}`))
		req.Header.Set("Ce-Specversion", "1.0")
		req.Header.Set("Ce-Id", "1")
		req.Header.Set("Ce-Source", "/test")
		req.Header.Set("Ce-Type", "t")
		w := httptest.NewRecorder()
		e.Ingress().Handler().ServeHTTP(w, req)
		return w.Result()
	}
	resp := send(routing.BrokerPath("ns", "b"))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("before the routes are set up: %d with Retry-After %q, want 503 with the configured Retry-After 3", resp.StatusCode, resp.Header.Get("Retry-After"))
	}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := e.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if resp := send(routing.BrokerPath("ns", "b")); resp.StatusCode != http.StatusAccepted {
		t.Errorf("once started: %d, want 202", resp.StatusCode)
	}
	if resp := send(routing.BrokerPath("ns", "missing")); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown Broker once started: %d, want 404", resp.StatusCode)
	}

	// Shutting down, the Broker is known but no longer takes events.
	if err := e.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	resp = send(routing.BrokerPath("ns", "b"))
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") != "3" {
		t.Errorf("after shutdown: %d with Retry-After %q, want 503 with the configured Retry-After 3", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
}
