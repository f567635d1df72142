package engine

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
)

// TestRetryCountSurvivesRestart checks that the attempts made before a
// restart count against delivery.retry after it: the count is JetStream's,
// not the process's.
func TestRetryCountSurvivesRestart(t *testing.T) {
	sub := newRecorder(t)
	sub.respond = func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(http.StatusInternalServerError) }
	tr := trigger("failing", sub.srv.URL, nil)
	tr.Delivery = &routing.Delivery{Retry: 3, BackoffPolicy: routing.BackoffLinear, BackoffDelay: routing.Duration(700 * time.Millisecond)}
	dir := t.TempDir()

	first, err := New(Options{Table: brokerTable(tr), DataDir: dir, HTTPAddr: "127.0.0.1:0", Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := first.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if code := post(t, first.URL()+"/brokers/ns/b", "retried", "t"); code != http.StatusAccepted {
		t.Fatalf("POST = %d", code)
	}
	eventually(t, 10*time.Second, "two attempts", func() bool { return sub.count() == 2 })
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	second := startEngine(t, Options{Table: brokerTable(tr), DataDir: dir})
	eventually(t, 20*time.Second, "the event to be given up and kept", func() bool {
		return testutilCounter(second, "knc_events_kept_total") == 1
	})
	if n := sub.count(); n != 4 {
		t.Errorf("%d attempts in all, want 4 (1 + retry 3) across the restart", n)
	}
}
