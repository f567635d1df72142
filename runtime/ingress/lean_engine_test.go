package ingress_test

import (
	"net/http"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
)

// TestEventsArriveOverBothHTTPPaths sends one event as Go's client sends
// it, which the lean server serves, and one chunked, which it hands to
// net/http, to a runtime with a real store and subscriber: both are
// accepted and delivered.
func TestEventsArriveOverBothHTTPPaths(t *testing.T) {
	sub := newIDRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil))})
	url := e.URL() + routing.BrokerPath("ns", "b")

	if code := post(t, url, "lean", "t"); code != http.StatusAccepted {
		t.Fatalf("plain POST: status %d, want 202", code)
	}
	if got := ingress.LeanServed(e.Ingress()); got != 1 {
		t.Errorf("the lean server served %d requests, want 1", got)
	}

	// A body of unknown length goes chunked.
	resp := postEvent(t, url, "chunked", "t", iotest.OneByteReader(strings.NewReader(`{"n":2}`)))
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("chunked POST: status %d, want 202", resp.StatusCode)
	}
	if !resp.Close {
		t.Errorf("chunked POST: the answer keeps the connection, want it closed after a chunked request")
	}
	if got := ingress.LeanServed(e.Ingress()); got != 1 {
		t.Errorf("the lean server served %d requests, want the chunked one left to net/http", got)
	}

	eventually(t, 20*time.Second, "both events delivered", func() bool { return len(sub.received()) == 2 })
	got := sub.received()
	slices.Sort(got)
	if diff := cmp.Diff([]string{"chunked", "lean"}, got); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}
