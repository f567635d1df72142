package ingress_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
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

// TestSmuggledRequestIsNotServed sends, on one connection, a request with
// both Content-Length and Transfer-Encoding: chunked whose chunked body
// ends at once and is followed by a second request, which a proxy framing
// by Content-Length would take for part of the body. The connection is
// refused with 400 and closed after it (RFC 9112 section 6.1): neither
// request is served, nor its event delivered. The hidden request was
// served, and its event delivered, before; then the first was answered
// 202 and only the connection closed.
func TestSmuggledRequestIsNotServed(t *testing.T) {
	sub := newIDRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil))})
	path := routing.BrokerPath("ns", "b")
	event := func(id string) string {
		return "Ce-Specversion: 1.0\r\nCe-Id: " + id + "\r\nCe-Source: /s\r\nCe-Type: t\r\n"
	}
	hidden := "POST " + path + " HTTP/1.1\r\nHost: knc\r\n" + event("hidden") + "Content-Length: 2\r\n\r\n{}"
	body := "0\r\n\r\n" + hidden
	smuggling := "POST " + path + " HTTP/1.1\r\nHost: knc\r\n" + event("visible") +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\nTransfer-Encoding: chunked\r\n\r\n" + body

	conn, err := net.Dial("tcp", strings.TrimPrefix(e.URL(), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(smuggling)); err != nil {
		t.Fatal(err)
	}
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Second)); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	var answers []int
	for {
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
				t.Fatalf("after %v: %v, want the connection closed", answers, err)
			}
			break
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		answers = append(answers, resp.StatusCode)
	}
	if !slices.Equal(answers, []int{http.StatusBadRequest}) {
		t.Errorf("answers on the connection = %v, want one 400, then the connection closed", answers)
	}

	if code := statusOf(t, http.DefaultClient, ceRequest(t, e.URL()+path, "after")); code != http.StatusAccepted {
		t.Fatalf("the event sent after = %d, want 202", code)
	}
	eventually(t, 10*time.Second, "the later event's delivery", func() bool { return slices.Contains(sub.received(), "after") })
	for _, id := range []string{"hidden", "visible"} {
		if slices.Contains(sub.received(), id) {
			t.Errorf("the event of the %s request was delivered: %v", id, sub.received())
		}
	}
}
