package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

// request is one request a subscriber received.
type request struct {
	Path   string
	Header http.Header
	Body   []byte
	At     time.Time
}

// ID is the CloudEvents id of a binary or structured request.
func (r request) ID() string {
	if id := r.Header.Get("Ce-Id"); id != "" {
		return id
	}
	var s struct {
		ID string `json:"id"`
	}
	_ = json.Unmarshal(r.Body, &s)
	return s.ID
}

// handler answers the n-th request (from 1) to one path.
type handler func(w http.ResponseWriter, r *http.Request, n int)

// subscriber is a real HTTP server on loopback that records every request
// and answers per path, 202 by default.
type subscriber struct {
	srv      *httptest.Server
	mu       sync.Mutex
	reqs     []request
	handlers map[string]handler
	counts   map[string]int
}

func newSubscriber(t *testing.T) *subscriber {
	s := &subscriber{handlers: map[string]handler{}, counts: map[string]int{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *subscriber) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	s.mu.Lock()
	s.reqs = append(s.reqs, request{Path: r.URL.Path, Header: r.Header.Clone(), Body: body, At: time.Now()})
	s.counts[r.URL.Path]++
	n := s.counts[r.URL.Path]
	h := s.handlers[r.URL.Path]
	s.mu.Unlock()
	if h == nil {
		w.WriteHeader(http.StatusAccepted)
		return
	}
	h(w, r, n)
}

// on sets how path answers.
func (s *subscriber) on(path string, h handler) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.handlers[path] = h
}

// url is the absolute URL of path.
func (s *subscriber) url(path string) string { return s.srv.URL + path }

// requests returns what path received so far.
func (s *subscriber) requests(path string) []request {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []request
	for _, r := range s.reqs {
		if r.Path == path {
			out = append(out, r)
		}
	}
	return out
}

// receivedAll reports whether path has received every event of ids.
func (s *subscriber) receivedAll(path string, ids []string) bool {
	seen := map[string]bool{}
	for _, r := range s.requests(path) {
		seen[r.ID()] = true
	}
	for _, id := range ids {
		if !seen[id] {
			return false
		}
	}
	return true
}

// waitFor waits until path has received at least n requests.
func (s *subscriber) waitFor(t testing.TB, path string, n int) []request {
	t.Helper()
	rig.Eventually(t, 20*time.Second, fmt.Sprintf("%d requests to %s", n, path), func() bool {
		return len(s.requests(path)) >= n
	})
	return s.requests(path)
}

// status answers every request with code.
func status(code int) handler {
	return func(w http.ResponseWriter, _ *http.Request, _ int) { w.WriteHeader(code) }
}

// replyWith answers 200 with a binary-mode reply event.
func replyWith(id, typ string, body string) handler {
	return func(w http.ResponseWriter, _ *http.Request, n int) {
		h := w.Header()
		h.Set("Ce-Specversion", "1.0")
		h.Set("Ce-Id", fmt.Sprintf("%s-%d", id, n))
		h.Set("Ce-Source", "/replier")
		h.Set("Ce-Type", typ)
		h.Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusOK)
		_, _ = io.WriteString(w, body)
	}
}

// closedPort returns a loopback URL nothing listens on.
func closedPort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return "http://" + addr + "/"
}

// event is a CloudEvent to send in binary mode.
type event struct {
	id, typ, source string
	ext             map[string]string
	contentType     string
	body            []byte
}

func (e event) request(url string) *http.Request {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(e.body))
	if err != nil {
		panic(err)
	}
	src := e.source
	if src == "" {
		src = "/e2e"
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", e.id)
	req.Header.Set("Ce-Source", src)
	req.Header.Set("Ce-Type", e.typ)
	for k, v := range e.ext {
		req.Header.Set("Ce-"+k, v)
	}
	if e.contentType != "" {
		req.Header.Set("Content-Type", e.contentType)
	}
	return req
}

var client = &http.Client{Timeout: 30 * time.Second}

// send posts e and returns the status code.
func send(t testing.TB, url string, e event) int {
	t.Helper()
	return do(t, e.request(url))
}

func do(t testing.TB, req *http.Request) int {
	t.Helper()
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// mustSend posts e and fails unless it is accepted with 202.
func mustSend(t testing.TB, url string, e event) {
	t.Helper()
	if code := send(t, url, e); code != http.StatusAccepted {
		t.Fatalf("POST event %s to %s = %d, want 202", e.id, url, code)
	}
}

// metric returns the sum of the samples of name whose labels include
// labels, or 0 when there is none.
func metric(t testing.TB, baseURL, name string, labels map[string]string) float64 {
	t.Helper()
	v, err := rig.Metric(baseURL, name, labels)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Table builders.

func obj(name string) routing.Source { return routing.Source{Namespace: "e2e", Name: name} }

func table(brokers []routing.Broker, channels ...routing.Channel) *routing.Table {
	return &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: brokers, Channels: channels}
}

func broker(name string, triggers ...routing.Trigger) routing.Broker {
	return routing.Broker{Source: obj(name), Path: routing.BrokerPath("e2e", name), Triggers: triggers}
}

func channel(name string, subs ...routing.Subscription) routing.Channel {
	return routing.Channel{Source: obj(name), Path: routing.ChannelPath("e2e", name), Subscriptions: subs}
}

func uri(u string) routing.Destination { return routing.Destination{URI: u} }

func trig(name, subscriber string, d *routing.Delivery) routing.Trigger {
	return routing.Trigger{Source: obj(name), Subscriber: uri(subscriber), Delivery: d}
}

func ms(n int) routing.Duration { return routing.Duration(time.Duration(n) * time.Millisecond) }
