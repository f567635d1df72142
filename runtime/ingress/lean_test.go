package ingress

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/textproto"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// The lean server is checked against net/http, its reference: the same
// bytes go to a net/http server and to a lean server, both built by
// newHTTPServer around the same recording handler, and what each handler
// saw and what each client read must be the same.

// seenRequest is what the recording handler saw of one request.
type seenRequest struct {
	Method, Path, RawPath, RawQuery, RequestURI, Host, Proto string
	Header                                                   http.Header
	ContentLength                                            int64
	TransferEncoding                                         []string
	Close                                                    bool
	Body                                                     string
	BodyErr                                                  string
	HasLocalAddr                                             bool
}

// recordingHandler records each request and answers as its X-Answer-*
// headers ask: X-Read (all, none or a number of bytes), X-Answer-Status,
// X-Answer-Body, X-Answer-Header ("Name: value"), X-Answer-Close, X-Panic.
type recordingHandler struct {
	mu   sync.Mutex
	seen []seenRequest
}

func (h *recordingHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	seen := seenRequest{
		Method: r.Method, Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery,
		RequestURI: r.RequestURI, Host: r.Host, Proto: r.Proto, Header: r.Header.Clone(),
		ContentLength: r.ContentLength, TransferEncoding: r.TransferEncoding, Close: r.Close,
	}
	_, seen.HasLocalAddr = r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	var body []byte
	var err error
	switch read := r.Header.Get("X-Read"); read {
	case "", "all":
		body, err = io.ReadAll(r.Body)
	case "none":
	default:
		n, _ := strconv.Atoi(read)
		body = make([]byte, max(n, 0))
		var got int
		got, err = io.ReadFull(r.Body, body)
		body = body[:got]
	}
	seen.Body = string(body)
	if err != nil {
		seen.BodyErr = err.Error()
	}
	h.mu.Lock()
	h.seen = append(h.seen, seen)
	h.mu.Unlock()
	if r.Header.Get("X-Panic") != "" {
		panic(http.ErrAbortHandler)
	}
	for _, line := range r.Header.Values("X-Answer-Header") {
		if name, value, ok := strings.Cut(line, ":"); ok {
			w.Header().Add(strings.TrimSpace(name), strings.TrimSpace(value))
		}
	}
	if r.Header.Get("X-Answer-Close") != "" {
		w.Header().Set("Connection", "close")
	}
	if code, err := strconv.Atoi(r.Header.Get("X-Answer-Status")); err == nil && code >= 200 && code <= 999 {
		w.WriteHeader(code)
	}
	if b := r.Header.Get("X-Answer-Body"); b != "" {
		_, _ = io.WriteString(w, b)
	}
}

func (h *recordingHandler) requests() []seenRequest {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.seen)
}

// servedBytes is what one server made of a connection's bytes.
type servedBytes struct {
	Requests  []seenRequest
	Responses []string
	// Rest is what followed the last response that could be read.
	Rest string
}

var testLimits = Limits{
	MaxHeaderBytes:    1 << 20,
	ReadHeaderTimeout: 5 * time.Second,
	ReadTimeout:       5 * time.Second,
	WriteTimeout:      5 * time.Second,
	IdleTimeout:       5 * time.Second,
}

// startServers starts a net/http server and a lean server of the same
// configuration, each with its own recording handler.
func startServers(t testing.TB, limits Limits) (netHTTP, lean *servedBy) {
	t.Helper()
	limits.setDefaults()
	log := slog.New(slog.DiscardHandler)
	s := &Server{cfg: Config{Limits: limits}, log: log}

	netHTTP = &servedBy{handler: &recordingHandler{}}
	ln := listenLoopback(t)
	netHTTP.addr = ln.Addr().String()
	std := s.newHTTPServer(netHTTP.handler, nil)
	go func(ln net.Listener) { _ = std.Serve(framingListener{ln}) }(ln)
	t.Cleanup(func() { _ = std.Close() })

	lean = &servedBy{handler: &recordingHandler{}}
	ln = listenLoopback(t) // a listener of its own
	lean.addr = ln.Addr().String()
	fallback := s.newHTTPServer(lean.handler, nil)
	lean.lean = newLeanServer(fallback.Handler, limits, log, fallback, ln.Addr())
	go func() { _ = fallback.Serve(lean.lean.fallback) }()
	go func(ln net.Listener) { _ = lean.lean.Serve(ln) }(ln)
	t.Cleanup(func() {
		lean.lean.Close()
		_ = fallback.Close()
	})
	return netHTTP, lean
}

func listenLoopback(t testing.TB) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

type servedBy struct {
	addr    string
	handler *recordingHandler
	lean    *leanServer
}

// send writes raw on a new connection, closes the writing side, and reads
// everything the server answers until it closes the connection.
func (s *servedBy) send(t testing.TB, raw []byte) servedBytes {
	t.Helper()
	before := len(s.handler.requests())
	c, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(30 * time.Second))
	if _, err := c.Write(raw); err != nil {
		t.Fatal(err)
	}
	_ = c.(*net.TCPConn).CloseWrite()
	answer, err := io.ReadAll(c)
	if err != nil && !errors.Is(err, net.ErrClosed) && !isReset(err) {
		t.Fatalf("reading the answers: %v", err)
	}
	got := servedBytes{Requests: s.handler.requests()[before:]}
	got.Responses, got.Rest = readResponses(answer)
	return got
}

func isReset(err error) bool {
	return err != nil && strings.Contains(err.Error(), "connection reset")
}

// readResponses renders each response in answer without its Date, which
// differs by when it was sent.
func readResponses(answer []byte) (responses []string, rest string) {
	br := bufio.NewReader(bytes.NewReader(answer))
	for {
		if _, err := br.Peek(1); err != nil {
			return responses, ""
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			restBytes, _ := io.ReadAll(br)
			return responses, fmt.Sprintf("unreadable (%v): %q", err, restBytes)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Header.Del("Date")
		var b strings.Builder
		fmt.Fprintf(&b, "%s %s\n", resp.Proto, resp.Status)
		_ = resp.Header.Write(&b)
		fmt.Fprintf(&b, "\n%q", body)
		if err != nil {
			fmt.Fprintf(&b, " (%v)", err)
		}
		responses = append(responses, b.String())
	}
}

const eventRequest = "POST /brokers/ns/default HTTP/1.1\r\nHost: knc\r\nCe-Id: 1\r\nCe-Source: s\r\nCe-Type: t\r\nCe-Specversion: 1.0\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}"

// leanServed lists inputs served by the lean server itself, at least in
// part; what the rest get from it comes from net/http.
var leanTestInputs = []struct {
	name string
	raw  string
	// lean is how many requests the lean server serves itself.
	lean int64
}{
	{name: "one event", raw: eventRequest, lean: 1},
	{name: "three events pipelined", raw: eventRequest + eventRequest + eventRequest, lean: 3},
	{name: "lower-case names", raw: "POST /a HTTP/1.1\r\nhost: knc\r\nce-id: 1\r\nce-loadsent: 7\r\nx-custom-NAME: v\r\ncontent-length: 3\r\n\r\nabc", lean: 1},
	{name: "repeated header", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-A: 1\r\nX-A: 2\r\nx-a: 3\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "spaces and tabs around values", raw: "POST /a HTTP/1.1\r\nHost:  knc \t\r\nX-A:\t v w \r\nX-B:\r\nContent-Length:   1  \r\n\r\nx", lean: 1},
	{name: "obs-text in a value", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-A: caf\xc3\xa9\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "leading zeros in the length", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: 003\r\n\r\nabc", lean: 1},
	{name: "empty host", raw: "POST /a HTTP/1.1\r\nHost:\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "connection close", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nConnection: Close\r\nContent-Length: 0\r\n\r\n" + eventRequest, lean: 1},
	{name: "keep-alive", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n" + eventRequest, lean: 2},
	{name: "handler closes", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Answer-Close: 1\r\nContent-Length: 0\r\n\r\n" + eventRequest, lean: 1},
	{name: "body not read", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Read: none\r\nContent-Length: 5\r\n\r\nabcde" + eventRequest, lean: 2},
	{name: "body read in part", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Read: 2\r\nContent-Length: 5\r\n\r\nabcde" + eventRequest, lean: 2},
	{name: "body too large to drop", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Read: none\r\nContent-Length: 300000\r\n\r\n" + strings.Repeat("z", 300000), lean: 1},
	{name: "body shorter than its length", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: 10\r\n\r\nabc", lean: 1},
	{name: "body shorter, not read", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Read: none\r\nContent-Length: 10\r\n\r\nabc", lean: 1},
	{name: "headers cut short", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Len", lean: 0},
	{name: "answer headers", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Answer-Header: Zed: 1\r\nX-Answer-Header: Alpha: 2\r\nX-Answer-Header: Alpha: 3\r\nX-Answer-Status: 409\r\nX-Answer-Body: {\"a\":1}\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "answer sniffed", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Answer-Body: <html>hi\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "answer 204 with a body", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Answer-Status: 204\r\nX-Answer-Body: x\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "answer 304", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Answer-Status: 304\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "answer with its own length and type", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Answer-Header: Content-Type: text/x\r\nX-Answer-Header: Content-Length: 2\r\nX-Answer-Body: ab\r\nContent-Length: 0\r\n\r\n", lean: 1},
	{name: "handler aborts", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Panic: 1\r\nContent-Length: 0\r\n\r\n" + eventRequest, lean: 1},
	{name: "event after a GET", raw: "GET /a HTTP/1.1\r\nHost: knc\r\n\r\n" + eventRequest, lean: 0},
	{name: "GET after an event", raw: eventRequest + "GET /a HTTP/1.1\r\nHost: knc\r\n\r\n" + eventRequest, lean: 1},

	// Handed over, answered by net/http.
	{name: "chunked", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"},
	{name: "chunked and a length", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"},
	{name: "expect", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n{}"},
	{name: "two lengths", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}"},
	{name: "two different lengths", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}x"},
	{name: "no length", raw: "POST /a HTTP/1.1\r\nHost: knc\r\n\r\n"},
	{name: "signed length", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nContent-Length: +2\r\n\r\n{}"},
	{name: "no host", raw: "POST /a HTTP/1.1\r\nContent-Length: 0\r\n\r\n"},
	{name: "two hosts", raw: "POST /a HTTP/1.1\r\nHost: a\r\nHost: b\r\nContent-Length: 0\r\n\r\n"},
	{name: "bad host", raw: "POST /a HTTP/1.1\r\nHost: a b\r\nContent-Length: 0\r\n\r\n"},
	{name: "query", raw: "POST /a?x=1 HTTP/1.1\r\nHost: knc\r\nContent-Length: 0\r\n\r\n"},
	{name: "escaped path", raw: "POST /a%2Fb HTTP/1.1\r\nHost: knc\r\nContent-Length: 0\r\n\r\n"},
	{name: "absolute target", raw: "POST http://knc/a HTTP/1.1\r\nHost: knc\r\nContent-Length: 0\r\n\r\n"},
	{name: "HTTP/1.0", raw: "POST /a HTTP/1.0\r\nContent-Length: 0\r\n\r\n"},
	{name: "bare line feeds", raw: "POST /a HTTP/1.1\nHost: knc\nContent-Length: 0\n\n"},
	{name: "folded header", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-A: 1\r\n 2\r\nContent-Length: 0\r\n\r\n"},
	{name: "space before the colon", raw: "POST /a HTTP/1.1\r\nHost : knc\r\nContent-Length: 0\r\n\r\n"},
	{name: "control character in a value", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-A: a\x01b\r\nContent-Length: 0\r\n\r\n"},
	{name: "line without a colon", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nnonsense\r\nContent-Length: 0\r\n\r\n"},
	{name: "blank line first", raw: "\r\n" + eventRequest},
	{name: "pragma", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nPragma: no-cache\r\nContent-Length: 0\r\n\r\n"},
	{name: "upgrade", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nConnection: Upgrade\r\nUpgrade: websocket\r\nContent-Length: 0\r\n\r\n"},
	{name: "status path", raw: "POST /status HTTP/1.1\r\nHost: knc\r\nContent-Length: 0\r\n\r\n"},
	{name: "ui path", raw: "POST /ui/x HTTP/1.1\r\nHost: knc\r\nContent-Length: 0\r\n\r\n"},
	{name: "header block over the buffer", raw: "POST /a HTTP/1.1\r\nHost: knc\r\nX-Big: " + strings.Repeat("b", leanBufferSize) + "\r\nContent-Length: 0\r\n\r\n"},
	{name: "TLS hello", raw: "\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03"},
	{name: "h2 preface", raw: "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"},
}

func TestLeanServesAsNetHTTP(t *testing.T) {
	netHTTP, lean := startServers(t, testLimits)
	for _, tc := range leanTestInputs {
		t.Run(tc.name, func(t *testing.T) {
			before := lean.lean.served.Load()
			want := netHTTP.send(t, []byte(tc.raw))
			got := lean.send(t, []byte(tc.raw))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("lean server differs from net/http (-net/http +lean):\n%s", diff)
			}
			if served := lean.lean.served.Load() - before; served != tc.lean {
				t.Errorf("the lean server served %d requests itself, want %d", served, tc.lean)
			}
		})
	}
}

func FuzzLeanServesAsNetHTTP(f *testing.F) {
	for _, tc := range leanTestInputs {
		if len(tc.raw) < 4096 {
			f.Add([]byte(tc.raw))
		}
	}
	netHTTP, lean := startServers(f, testLimits)
	f.Fuzz(func(t *testing.T, raw []byte) {
		want := netHTTP.send(t, raw)
		got := lean.send(t, raw)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("lean server differs from net/http on %q (-net/http +lean):\n%s", raw, diff)
		}
	})
}

func TestCanonicalKeyAsTextproto(t *testing.T) {
	for _, name := range []string{"host", "HOST", "Host", "ce-id", "CE-ID", "Ce-Id", "x-a-b", "-x", "x--y", "a_b", "a.b", "1a-2b", "content-length", "Content-length", "x!#$%&'*+-.^_`|~y", "Kn-Namespace", "traceparent"} {
		got, ok := canonicalKey(name)
		if !ok {
			t.Errorf("canonicalKey(%q) refused a token", name)
			continue
		}
		if want := textproto.CanonicalMIMEHeaderKey(name); got != want {
			t.Errorf("canonicalKey(%q) = %q, textproto gives %q", name, got, want)
		}
	}
	for _, name := range []string{"", "a b", "a:b", "a\x00", "é", strings.Repeat("a", 65)} {
		if got, ok := canonicalKey(name); ok {
			t.Errorf("canonicalKey(%q) = %q, want it refused", name, got)
		}
	}
}
