package delivery

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

// The direct client (direct.go) replaces http.Transport for plain-HTTP
// subscribers. These tests keep the Transport as the reference: the same
// sends go through a Sender that uses it (transportSender) and one that
// sends directly, and what the subscriber receives and what the Sender
// returns must not differ.

// transportSender is a Sender whose requests all go through the
// Transport that NewSender configures.
func transportSender() *Sender {
	s := NewSender()
	s.Client = &http.Client{Transport: s.Client.Transport, CheckRedirect: s.Client.CheckRedirect}
	return s
}

// closeIdle closes every idle connection of the direct client.
func (c *directClient) closeIdle() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for addr, conns := range c.idle {
		for _, conn := range conns {
			conn.Close()
		}
		delete(c.idle, addr)
	}
}

// directConns counts the connections the direct client keeps idle: more
// than zero after a send shows that the send went through it.
func directConns(s *Sender) int {
	s.direct.mu.Lock()
	defer s.direct.mu.Unlock()
	n := 0
	for _, conns := range s.direct.idle {
		n += len(conns)
	}
	return n
}

// received is what a subscriber sees of a request.
type received struct {
	Method, RequestURI, Host, Proto string
	ContentLength                   int64
	TransferEncoding                []string
	Header                          http.Header
	Body                            string
}

func TestDirectSendsWhatTheTransportSends(t *testing.T) {
	var mu sync.Mutex
	var got []received
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got = append(got, received{r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, r.TransferEncoding, r.Header, string(body)})
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()

	big := testEvent(t)
	big.DataEncoded = []byte(`"` + strings.Repeat("x", 64<<10) + `"`)
	empty := testEvent(t)
	empty.DataEncoded = nil
	empty.SetDataContentType("")
	withTTL := testEvent(t)
	withTTL.SetExtension("knativebrokerttl", 4)
	unsafeAttr := testEvent(t)
	unsafeAttr.SetSubject(" padded ")
	v03 := testEvent(t)
	v03.SetSpecVersion(event.CloudEventsVersionV03)

	for _, tc := range []struct {
		name string
		ev   *event.Event
		path string
		o    Options
	}{
		{name: "binary", ev: testEvent(t), path: "/sink", o: Options{Format: routing.FormatBinary}},
		{name: "structured", ev: testEvent(t), path: "/sink", o: Options{Format: routing.FormatJSON}},
		{name: "query", ev: testEvent(t), path: "/a%20b/c?x=1&y=%2F", o: Options{Format: routing.FormatBinary}},
		{name: "no data", ev: empty, path: "/", o: Options{Format: routing.FormatBinary}},
		{name: "larger than the buffer", ev: big, path: "/", o: Options{Format: routing.FormatBinary}},
		{name: "omitted extension", ev: withTTL, path: "/", o: Options{Format: routing.FormatBinary, OmitExtension: "knativebrokerttl"}},
		{name: "omitted extension, structured", ev: withTTL, path: "/", o: Options{Format: routing.FormatJSON, OmitExtension: "knativebrokerttl"}},
		{name: "attribute unsafe in a header", ev: unsafeAttr, path: "/", o: Options{Format: routing.FormatBinary}},
		{name: "0.3", ev: v03, path: "/", o: Options{Format: routing.FormatBinary}},
		{name: "headers", ev: testEvent(t), path: "/", o: Options{Format: routing.FormatBinary, Header: http.Header{
			"Kn-Namespace": {"team-a"},
			"Traceparent":  {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
			"X-Two":        {"one", "two"},
			"User-Agent":   {"knc-test"},
		}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			direct, reference := NewSender(), transportSender()
			mu.Lock()
			got = nil
			mu.Unlock()
			if r := reference.Send(t.Context(), tc.ev, srv.URL+tc.path, tc.o); !r.Success {
				t.Fatalf("through the Transport: %+v", r)
			}
			if r := direct.Send(t.Context(), tc.ev, srv.URL+tc.path, tc.o); !r.Success {
				t.Fatalf("directly: %+v", r)
			}
			if n := directConns(direct); n != 1 {
				t.Fatalf("the direct client keeps %d connections, want 1: the send did not go through it", n)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(got) != 2 {
				t.Fatalf("the subscriber received %d requests, want 2", len(got))
			}
			if diff := cmp.Diff(got[0], got[1]); diff != "" {
				t.Errorf("request (-Transport +direct):\n%s", diff)
			}
		})
	}
}

// rawSubscriber answers every request it reads with the bytes of respond,
// then closes the connection when closeAfter says so. It counts the
// connections it accepted and the requests it read.
type rawSubscriber struct {
	ln         net.Listener
	respond    func(*http.Request) string
	closeAfter bool
	// keepSwitched keeps a connection open after a 101, as a subscriber
	// that switched protocols would.
	keepSwitched atomic.Bool
	conns, reqs  atomic.Int64
}

func startRawSubscriber(t testing.TB, respond func(*http.Request) string, closeAfter bool) *rawSubscriber {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &rawSubscriber{ln: ln, respond: respond, closeAfter: closeAfter}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			s.conns.Add(1)
			wg.Go(func() { s.serve(c) })
		}
	})
	return s
}

// A subscriber that answers 101 and keeps the connection open does not
// hold the attempt: what follows is not HTTP, and is not read.
func TestSwitchingProtocolsDoesNotHoldTheAttempt(t *testing.T) {
	sub := startRawSubscriber(t, func(*http.Request) string {
		return "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n"
	}, false)
	sub.keepSwitched.Store(true)
	for name, s := range map[string]*Sender{"Transport": transportSender(), "direct": NewSender()} {
		done := make(chan Result, 1)
		go func() {
			done <- s.Send(t.Context(), testEvent(t), sub.url(), Options{Format: routing.FormatBinary})
		}()
		select {
		case r := <-done:
			if r.Success || r.StatusCode != http.StatusSwitchingProtocols {
				t.Errorf("%s: %+v, want a failed attempt with status 101", name, r)
			}
		case <-time.After(time.Minute):
			t.Fatalf("%s: the attempt still waits on the switched connection after a minute", name)
		}
	}
}

func (s *rawSubscriber) serve(c net.Conn) {
	defer c.Close()
	br := bufio.NewReader(c)
	for {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		_, _ = io.Copy(io.Discard, req.Body)
		s.reqs.Add(1)
		response := s.respond(req)
		// After a 101 the connection is no longer HTTP; the Transport
		// reads what follows as the body, until the connection closes.
		switchedProtocols := strings.HasPrefix(response, "HTTP/1.1 101") && !s.keepSwitched.Load()
		if _, err := io.WriteString(c, response); err != nil || s.closeAfter || switchedProtocols {
			return
		}
	}
}

func (s *rawSubscriber) url() string { return "http://" + s.ln.Addr().String() + "/" }

// resultOf is what the tests compare of a Result: an error's text differs
// between the two clients, its presence must not.
type resultOf struct {
	StatusCode         int
	Success, Retryable bool
	Reply              string
	ReplyHeader        http.Header
	NotAnEvent         bool
	RetryAfter         time.Duration
	Body               string
	HasErr             bool
}

func compareResult(r Result) resultOf {
	out := resultOf{StatusCode: r.StatusCode, Success: r.Success, Retryable: r.Retryable, ReplyHeader: r.ReplyHeader,
		NotAnEvent: r.NotAnEvent, RetryAfter: r.RetryAfter, Body: string(r.Body), HasErr: r.Err != nil}
	if r.Reply != nil {
		b, _ := r.Reply.MarshalJSON()
		out.Reply = string(b)
	}
	return out
}

// directAndTransport sends one event to a subscriber answering response
// through both clients and returns both results, failing when the direct
// send did not go through the direct client.
func directAndTransport(t *testing.T, response string, strict, closeAfter bool) (viaTransport, viaDirect Result) {
	t.Helper()
	sub := startRawSubscriber(t, func(*http.Request) string { return response }, closeAfter)
	ev := testEvent(t)
	o := Options{Format: routing.FormatBinary, Timeout: 10 * time.Second, StrictReply: strict}
	viaTransport = transportSender().Send(context.Background(), ev, sub.url(), o)
	viaDirect = NewSender().Send(context.Background(), ev, sub.url(), o)
	return viaTransport, viaDirect
}

const replyHead = "HTTP/1.1 200 OK\r\nCe-Specversion: 1.0\r\nCe-Id: r1\r\nCe-Source: /s\r\nCe-Type: t\r\nContent-Type: text/plain\r\nTraceparent: 00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01\r\n"

func TestDirectReadsWhatTheTransportReads(t *testing.T) {
	for _, tc := range []struct {
		name     string
		response string
		strict   bool
	}{
		{"accepted", "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", false},
		{"no content", "HTTP/1.1 204 No Content\r\n\r\n", false},
		{"binary reply", replyHead + "Content-Length: 5\r\n\r\nhello", false},
		{"chunked reply", replyHead + "Transfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n", false},
		{"structured reply", "HTTP/1.1 200 OK\r\nContent-Type: application/cloudevents+json\r\nContent-Length: 67\r\n\r\n" +
			`{"specversion":"1.0","id":"r2","source":"/s","type":"t","data":"x"}`, false},
		{"not an event", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", false},
		{"not an event, strict", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc", true},
		{"bad reply", replyHead[:len("HTTP/1.1 200 OK\r\n")] + "Ce-Specversion: 1.0\r\nCe-Id: r1\r\nContent-Length: 1\r\n\r\nx", false},
		{"server error with body", "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops", false},
		{"too many requests", "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\nContent-Length: 0\r\n\r\n", false},
		{"unavailable", "HTTP/1.1 503 Service Unavailable\r\nRetry-After: 2\r\nContent-Length: 0\r\n\r\n", false},
		{"redirect", "HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n", false},
		{"bad request", "HTTP/1.1 400 Bad Request\r\nContent-Length: 2\r\n\r\nno", false},
		{"switching protocols", "HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\nConnection: Upgrade\r\n\r\n", false},
		{"early hints first", "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n", false},
		{"connection close", "HTTP/1.1 202 Accepted\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", false},
		{"HTTP/1.0", "HTTP/1.0 202 Accepted\r\nContent-Length: 0\r\n\r\n", false},
		{"malformed status line", "HTTP/1.1 abc\r\n\r\n", false},
		// The subscriber closes the connection after these.
		{"no answer", "", false},
		{"truncated body", "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 10\r\n\r\nabc", false},
		{"HTTP/1.0 without a length", "HTTP/1.0 200 OK\r\n\r\nabc", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			closeAfter := strings.HasPrefix(tc.name, "no answer") || strings.HasPrefix(tc.name, "truncated") || strings.HasSuffix(tc.name, "without a length")
			viaTransport, viaDirect := directAndTransport(t, tc.response, tc.strict, closeAfter)
			if diff := cmp.Diff(compareResult(viaTransport), compareResult(viaDirect)); diff != "" {
				t.Errorf("result (-Transport +direct):\n%s\nTransport's error: %v\ndirect error: %v", diff, viaTransport.Err, viaDirect.Err)
			}
		})
	}
}

func TestDirectReusesConnections(t *testing.T) {
	sub := startRawSubscriber(t, func(*http.Request) string { return "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n" }, false)
	s := NewSender()
	for range 10 {
		if r := s.Attempt(t.Context(), testEvent(t), sub.url(), routing.FormatBinary, 10*time.Second); !r.Success {
			t.Fatalf("attempt: %+v", r)
		}
	}
	if n := sub.conns.Load(); n != 1 {
		t.Errorf("10 sends one after another opened %d connections, want 1", n)
	}
}

// Bytes after the end of an answer answer nothing: the connection is out
// of step, and the next request goes over a new one, as with the
// Transport.
func TestDirectDropsAConnectionOutOfStep(t *testing.T) {
	sub := startRawSubscriber(t, func(*http.Request) string {
		return "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\nHTTP/1.1 500 Not asked for\r\n\r\n"
	}, false)
	for name, s := range map[string]*Sender{"Transport": transportSender(), "direct": NewSender()} {
		for i := range 2 {
			if r := s.Attempt(t.Context(), testEvent(t), sub.url(), routing.FormatBinary, 10*time.Second); !r.Success {
				t.Fatalf("%s, attempt %d: %+v", name, i+1, r)
			}
		}
	}
	if n := sub.conns.Load(); n != 4 {
		t.Errorf("the subscriber accepted %d connections, want 4 (a new one for each request)", n)
	}
}

// A subscriber that closes a kept-alive connection after each answer
// without saying so: the next request on it finds it closed, and is sent
// again on a new connection, as the Transport does.
func TestDirectSendsAgainWhenAnIdleConnectionWasClosed(t *testing.T) {
	sub := startRawSubscriber(t, func(*http.Request) string { return "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n" }, true)
	s := NewSender()
	for i := range 5 {
		if i > 0 {
			// Wait until the subscriber has closed the previous connection,
			// so that the next send finds it closed.
			waitFor(t, func() bool { return sub.conns.Load() == int64(i) && sub.reqs.Load() == int64(i) })
		}
		if r := s.Attempt(t.Context(), testEvent(t), sub.url(), routing.FormatBinary, 10*time.Second); !r.Success {
			t.Fatalf("attempt %d: %+v", i+1, r)
		}
	}
	if n := sub.reqs.Load(); n != 5 {
		t.Errorf("the subscriber read %d requests, want 5", n)
	}
}

func TestDirectStopsWithTheContext(t *testing.T) {
	block := make(chan struct{})
	defer close(block)
	sub := startRawSubscriber(t, func(r *http.Request) string {
		if r.URL.Path == "/slow" {
			<-block
		}
		return "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
	}, false)
	s := NewSender()
	slow := strings.TrimSuffix(sub.url(), "/") + "/slow"
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan Result)
	go func() { done <- s.Send(ctx, testEvent(t), slow, Options{Format: routing.FormatBinary}) }()
	waitFor(t, func() bool { return sub.reqs.Load() == 1 })
	cancel()
	r := <-done
	if r.Success || !r.Retryable || !errors.Is(r.Err, context.Canceled) {
		t.Fatalf("a send cancelled while waiting: %+v, want a retryable failure with context.Canceled", r)
	}
	if n := directConns(s); n != 0 {
		t.Fatalf("the connection of a cancelled send is kept (%d idle)", n)
	}
	if r := s.Attempt(t.Context(), testEvent(t), sub.url(), routing.FormatBinary, 10*time.Second); !r.Success {
		t.Fatalf("the next send: %+v", r)
	}
	if n := sub.conns.Load(); n != 2 {
		t.Errorf("the subscriber accepted %d connections, want 2: the cancelled one is not used again", n)
	}
}

func TestDirectClosesConnectionsIdleTooLong(t *testing.T) {
	var closed atomic.Int64
	srv := httptest.NewUnstartedServer(status(http.StatusAccepted, ""))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateClosed {
			closed.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	s := NewSender()
	s.direct.idleTimeout = 20 * time.Millisecond
	if r := s.Attempt(t.Context(), testEvent(t), srv.URL, routing.FormatBinary, 10*time.Second); !r.Success {
		t.Fatalf("attempt: %+v", r)
	}
	waitFor(t, func() bool { return closed.Load() == 1 })
	if n := directConns(s); n != 0 {
		t.Errorf("%d connections are still kept after the idle timeout", n)
	}
}

func TestDirectLeavesProxiedAndTLSRequestsToTheTransport(t *testing.T) {
	srv := httptest.NewTLSServer(status(http.StatusAccepted, ""))
	defer srv.Close()
	s := NewSender()
	s.Client.Transport.(*http.Transport).TLSClientConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig
	if r := s.Attempt(t.Context(), testEvent(t), srv.URL, routing.FormatBinary, 10*time.Second); !r.Success {
		t.Fatalf("attempt over TLS: %+v", r)
	}
	if n := directConns(s); n != 0 {
		t.Errorf("an https request went through the direct client")
	}

	var proxied atomic.Int64
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.IsAbs() {
			proxied.Add(1)
		}
		w.WriteHeader(http.StatusAccepted)
	}))
	defer proxy.Close()
	proxyURL, _ := url.Parse(proxy.URL)
	s = NewSender()
	s.Client.Transport.(*http.Transport).Proxy = http.ProxyURL(proxyURL)
	if r := s.Attempt(t.Context(), testEvent(t), "http://subscriber.invalid/sink", routing.FormatBinary, 10*time.Second); !r.Success {
		t.Fatalf("attempt through a proxy: %+v", r)
	}
	if proxied.Load() != 1 || directConns(s) != 0 {
		t.Errorf("a request for a proxy went directly (the proxy saw %d)", proxied.Load())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 30s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// FuzzDirectReadsWhatTheTransportReads answers a send with arbitrary
// bytes and checks that the direct client and the Transport give the same
// result. One subscriber serves every input, closing the connection after
// each answer so that an answer shorter than it says ends; a listener per
// input would run out of ports.
func FuzzDirectReadsWhatTheTransportReads(f *testing.F) {
	f.Add("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
	f.Add(replyHead + "Content-Length: 5\r\n\r\nhello")
	f.Add("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1\r\na\r\n0\r\n\r\n")
	f.Add("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 3\r\nContent-Length: 1\r\n\r\nx")
	f.Add("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 500 Oops\r\nContent-Length: 2\r\n\r\nno")
	f.Add("HTTP/1.0 200 OK\r\n\r\nabc")
	var response atomic.Pointer[string]
	sub := startRawSubscriber(f, func(*http.Request) string { return *response.Load() }, true)
	direct, reference := NewSender(), transportSender()
	o := Options{Format: routing.FormatBinary, Timeout: 10 * time.Second, StrictReply: true}
	f.Fuzz(func(t *testing.T, answer string) {
		response.Store(&answer)
		// Both start on a new connection: the subscriber closed the last
		// one, and whether a client has seen that yet is a race.
		reference.Client.Transport.(*http.Transport).CloseIdleConnections()
		direct.direct.closeIdle()
		ev := testEvent(t)
		viaTransport := reference.Send(t.Context(), ev, sub.url(), o)
		viaDirect := direct.Send(t.Context(), ev, sub.url(), o)
		if diff := cmp.Diff(compareResult(viaTransport), compareResult(viaDirect)); diff != "" {
			t.Errorf("result (-Transport +direct):\n%s\nTransport's error: %v\ndirect error: %v", diff, viaTransport.Err, viaDirect.Err)
		}
	})
}

// The deliveries of one event share its encoding (Options.Encoded): each
// subscriber receives what a send that encodes the event itself sends,
// with its own headers, and the shared encoding is never changed.
func TestSendsShareAnEncoding(t *testing.T) {
	var mu sync.Mutex
	got := map[string][]received{}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], received{r.Method, r.RequestURI, r.Host, r.Proto, r.ContentLength, r.TransferEncoding, r.Header, string(body)})
		mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	ev := testEvent(t)
	ev.SetExtension("knativebrokerttl", 3)

	for name, s := range map[string]*Sender{"direct": NewSender(), "Transport": transportSender()} {
		t.Run(name, func(t *testing.T) {
			enc, err := Encode(ev, routing.FormatBinary, "knativebrokerttl")
			if err != nil {
				t.Fatal(err)
			}
			before := enc.header.Clone()
			var wg sync.WaitGroup
			for i := range 8 {
				wg.Go(func() {
					ns := "team-" + strconv.Itoa(i)
					o := Options{Format: routing.FormatBinary, OmitExtension: "knativebrokerttl", Header: http.Header{"Kn-Namespace": {ns}}}
					path := "/" + name + "/" + ns
					if r := s.Send(t.Context(), ev, srv.URL+path+"/own", o); !r.Success {
						t.Errorf("encoding its own: %+v", r)
					}
					o.Encoded = enc
					if r := s.Send(t.Context(), ev, srv.URL+path+"/shared", o); !r.Success {
						t.Errorf("sharing: %+v", r)
					}
				})
			}
			wg.Wait()
			if diff := cmp.Diff(before, enc.header); diff != "" {
				t.Errorf("the shared encoding was changed (-before +after):\n%s", diff)
			}
			mu.Lock()
			defer mu.Unlock()
			for i := range 8 {
				path := "/" + name + "/team-" + strconv.Itoa(i)
				own, shared := got[path+"/own"], got[path+"/shared"]
				if len(own) != 1 || len(shared) != 1 {
					t.Fatalf("%s: %d and %d requests, want one each", path, len(own), len(shared))
				}
				if ns := shared[0].Header.Get("Kn-Namespace"); ns != "team-"+strconv.Itoa(i) {
					t.Errorf("%s: Kn-Namespace %q", path, ns)
				}
				if _, ok := shared[0].Header["Ce-Knativebrokerttl"]; ok {
					t.Errorf("%s: the omitted extension was sent", path)
				}
				own[0].RequestURI, shared[0].RequestURI = "", ""
				if diff := cmp.Diff(own[0], shared[0]); diff != "" {
					t.Errorf("%s (-own +shared):\n%s", path, diff)
				}
			}
		})
	}
}

// An encoding made for another format or extension is not used.
func TestSendIgnoresAnEncodingForAnotherFormat(t *testing.T) {
	var ct atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct.Store(r.Header.Get("Content-Type") + "|" + r.Header.Get("Ce-Id"))
		w.WriteHeader(http.StatusAccepted)
	}))
	defer srv.Close()
	ev := testEvent(t)
	structured, err := Encode(ev, routing.FormatJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	r := NewSender().Send(t.Context(), ev, srv.URL, Options{Format: routing.FormatBinary, Encoded: structured})
	if !r.Success {
		t.Fatalf("send: %+v", r)
	}
	if got, want := ct.Load(), "application/json|42"; got != want {
		t.Errorf("Content-Type|Ce-Id = %q, want %q (binary mode)", got, want)
	}
}
