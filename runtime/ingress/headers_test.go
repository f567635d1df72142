package ingress_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/engine"
)

// idRecorder is a subscriber that keeps the ce-id of each event it
// receives.
type idRecorder struct {
	mu  sync.Mutex
	ids []string
	srv *httptest.Server
}

func newIDRecorder(t *testing.T) *idRecorder {
	rec := &idRecorder{}
	rec.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		rec.mu.Lock()
		rec.ids = append(rec.ids, r.Header.Get("Ce-Id"))
		rec.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(rec.srv.Close)
	return rec
}

func (r *idRecorder) received() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.ids)
}

// TestHeaderNotUTF8IsRefused sends events whose ce- headers are not valid
// UTF-8: each is answered 400 and never reaches the subscriber, which gets
// only the valid event sent after them. They were stored and forwarded
// raw before.
func TestHeaderNotUTF8IsRefused(t *testing.T) {
	sub := newIDRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil))})
	url := e.URL() + routing.BrokerPath("ns", "b")
	for name, header := range map[string][2]string{
		"extension": {"Ce-Comment", "caf\xe9"},
		"type":      {"Ce-Type", "order.\xff"},
		"subject":   {"Ce-Subject", "\xc3("},
	} {
		t.Run(name, func(t *testing.T) {
			req := ceRequest(t, url, "not-utf8-"+name)
			req.Header.Set(header[0], header[1])
			if code := statusOf(t, http.DefaultClient, req); code != http.StatusBadRequest {
				t.Errorf("%s: %q answered %d, want 400", header[0], header[1], code)
			}
		})
	}
	if code := statusOf(t, http.DefaultClient, ceRequest(t, url, "valid")); code != http.StatusAccepted {
		t.Fatalf("the valid event answered %d, want 202", code)
	}
	eventually(t, 10*time.Second, "the valid event's delivery", func() bool { return len(sub.received()) > 0 })
	if diff := cmp.Diff([]string{"valid"}, sub.received()); diff != "" {
		t.Errorf("delivered (-want +got):\n%s", diff)
	}
}
