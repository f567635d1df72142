package delivery

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

// TestSendAddsHeaders checks that Options.Header reaches the subscriber
// next to the event's own headers, and that the pass-through headers of a
// reply come back in Result.ReplyHeader.
func TestSendAddsHeaders(t *testing.T) {
	var got http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = r.Header.Clone()
		replyHeaders(w)
		w.Header().Set("Knative-Reply", "yes")
		w.Header().Set("X-Private", "no")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	r := NewSender().Send(context.Background(), testEvent(t), srv.URL, Options{
		Format: routing.FormatBinary, Timeout: 10 * time.Second,
		Header: http.Header{"Kn-Namespace": {"team-a"}, "Knative-Hello": {"world"}},
	})
	if !r.Success || r.Reply == nil {
		t.Fatalf("attempt: %+v", outcomeOf(r))
	}
	for name, want := range map[string]string{"Kn-Namespace": "team-a", "Knative-Hello": "world", "Ce-Id": "42", "Prefer": "reply"} {
		if got.Get(name) != want {
			t.Errorf("request header %s = %q, want %q", name, got.Get(name), want)
		}
	}
	if d := cmp.Diff(http.Header{"Knative-Reply": {"yes"}}, r.ReplyHeader); d != "" {
		t.Errorf("ReplyHeader (-want +got):\n%s", d)
	}
}

// TestStrictReply checks that a 200 whose body is not a CloudEvent fails
// the attempt with StrictReply, as Knative's Broker filter does, and is a
// success without it, as Knative's Channel dispatcher has it; an empty 200
// succeeds either way. The dead letter of such a failure says 502.
func TestStrictReply(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		if r.URL.Path == "/text" {
			_, _ = io.WriteString(w, "OK")
		}
	}))
	defer srv.Close()
	s := NewSender()
	for _, tt := range []struct {
		path           string
		strict         bool
		success, notEv bool
	}{
		{"/text", true, false, true},
		{"/text", false, true, true},
		{"/empty", true, true, false},
		{"/empty", false, true, false},
	} {
		r := s.Send(context.Background(), testEvent(t), srv.URL+tt.path, Options{StrictReply: tt.strict})
		if r.Success != tt.success || r.NotAnEvent != tt.notEv {
			t.Errorf("%s strict=%v: success %v, not an event %v; want %v, %v", tt.path, tt.strict, r.Success, r.NotAnEvent, tt.success, tt.notEv)
		}
		if !r.Success {
			if !r.Retryable || string(r.Body) != "OK" {
				t.Errorf("%s strict: retryable %v, body %q; want retryable with the body", tt.path, r.Retryable, r.Body)
			}
			dl := DeadLetter(testEvent(t), srv.URL+tt.path, r)
			if code := dl.Extensions()[ExtensionErrorCode]; code != int32(http.StatusBadGateway) {
				t.Errorf("dead letter knativeerrorcode = %v, want 502", code)
			}
		}
	}
}

// TestOmitExtension checks that Options.OmitExtension leaves the extension
// out of the request in both modes, and that the event itself keeps it.
func TestOmitExtension(t *testing.T) {
	var got []http.Header
	var bodies []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got = append(got, r.Header.Clone())
		bodies = append(bodies, string(b))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	e := testEvent(t)
	e.SetExtension("knativebrokerttl", int32(7))
	for _, format := range []string{routing.FormatBinary, routing.FormatJSON} {
		if r := NewSender().Send(context.Background(), e, srv.URL, Options{Format: format, OmitExtension: "knativebrokerttl"}); !r.Success {
			t.Fatalf("%s: %+v", format, outcomeOf(r))
		}
	}
	if v := got[0].Get("Ce-Knativebrokerttl"); v != "" || got[0].Get("Ce-Tenant") != "acme" {
		t.Errorf("binary: knativebrokerttl %q, tenant %q", v, got[0].Get("Ce-Tenant"))
	}
	if strings.Contains(bodies[1], "knativebrokerttl") || !strings.Contains(bodies[1], `"tenant":"acme"`) {
		t.Errorf("structured body %s", bodies[1])
	}
	if _, ok := e.Extensions()["knativebrokerttl"]; !ok {
		t.Error("the event lost its extension")
	}
}
