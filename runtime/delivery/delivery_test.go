package delivery

import (
	"bytes"
	"context"
	"encoding/base64"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
)

func testEvent(t *testing.T) *event.Event {
	t.Helper()
	e := event.New()
	e.SetID("42")
	e.SetSource("/orders")
	e.SetType("order.created")
	e.SetExtension("tenant", "acme")
	e.SetDataContentType("application/json")
	e.DataEncoded = []byte("{\"total\": 3}\n")
	return &e
}

func replyHeaders(w http.ResponseWriter) {
	w.Header().Set("Ce-Specversion", "1.0")
	w.Header().Set("Ce-Id", "reply-1")
	w.Header().Set("Ce-Source", "/subscriber")
	w.Header().Set("Ce-Type", "order.checked")
}

func status(code int, body string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
		io.WriteString(w, body)
	}
}

// outcome is the part of a Result a table can state.
type outcome struct {
	StatusCode int
	Success    bool
	Retryable  bool
	ReplyID    string
	Body       string
	HasErr     bool
}

func outcomeOf(r Result) outcome {
	o := outcome{StatusCode: r.StatusCode, Success: r.Success, Retryable: r.Retryable, Body: string(r.Body), HasErr: r.Err != nil}
	if r.Reply != nil {
		o.ReplyID = r.Reply.ID()
	}
	return o
}

func TestAttemptClassifiesResponses(t *testing.T) {
	tests := []struct {
		name    string
		handler http.HandlerFunc
		timeout time.Duration
		want    outcome
	}{
		{name: "200 with a binary reply", handler: func(w http.ResponseWriter, _ *http.Request) {
			replyHeaders(w)
			w.WriteHeader(200)
			io.WriteString(w, "checked")
		}, want: outcome{StatusCode: 200, Success: true, ReplyID: "reply-1"}},
		{name: "200 with a structured reply", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/cloudevents+json")
			io.WriteString(w, `{"specversion":"1.0","id":"reply-2","source":"/s","type":"t","data":{"ok":true}}`)
		}, want: outcome{StatusCode: 200, Success: true, ReplyID: "reply-2"}},
		{name: "200 without a body", handler: status(200, ""), want: outcome{StatusCode: 200, Success: true}},
		{name: "200 with a body that is no CloudEvent", handler: status(200, "thanks"), want: outcome{StatusCode: 200, Success: true}},
		{name: "200 with an invalid CloudEvent", handler: func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Ce-Specversion", "1.0")
			w.WriteHeader(200)
		}, want: outcome{StatusCode: 200, Retryable: true, HasErr: true}},
		{name: "202 with a CloudEvent body is no reply", handler: func(w http.ResponseWriter, _ *http.Request) {
			replyHeaders(w)
			w.WriteHeader(202)
			io.WriteString(w, "checked")
		}, want: outcome{StatusCode: 202, Success: true}},
		{name: "201", handler: status(201, "created"), want: outcome{StatusCode: 201, Success: true}},
		{name: "204", handler: status(204, ""), want: outcome{StatusCode: 204, Success: true}},
		{name: "101", handler: func(w http.ResponseWriter, _ *http.Request) {
			conn, buf, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			defer conn.Close()
			buf.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: nothing\r\n\r\n")
			buf.Flush()
		}, want: outcome{StatusCode: 101}},
		{name: "302 is not followed", handler: func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/elsewhere" {
				w.WriteHeader(http.StatusAccepted)
				return
			}
			w.Header().Set("Location", "/elsewhere")
			w.WriteHeader(http.StatusFound)
			io.WriteString(w, "moved")
		}, want: outcome{StatusCode: 302, Body: "moved"}},
		{name: "400", handler: status(400, "bad event"), want: outcome{StatusCode: 400, Body: "bad event"}},
		{name: "401", handler: status(401, "who"), want: outcome{StatusCode: 401, Body: "who"}},
		{name: "403", handler: status(403, "no"), want: outcome{StatusCode: 403, Body: "no"}},
		{name: "404", handler: status(404, "gone?"), want: outcome{StatusCode: 404, Retryable: true, Body: "gone?"}},
		{name: "408", handler: status(408, ""), want: outcome{StatusCode: 408, Retryable: true}},
		{name: "409", handler: status(409, ""), want: outcome{StatusCode: 409, Retryable: true}},
		{name: "410", handler: status(410, "gone"), want: outcome{StatusCode: 410, Body: "gone"}},
		{name: "413", handler: status(413, ""), want: outcome{StatusCode: 413}},
		{name: "429", handler: status(429, "slow down"), want: outcome{StatusCode: 429, Retryable: true, Body: "slow down"}},
		{name: "500", handler: status(500, "boom"), want: outcome{StatusCode: 500, Retryable: true, Body: "boom"}},
		{name: "503", handler: status(503, ""), want: outcome{StatusCode: 503, Retryable: true}},
		{name: "connection reset", handler: func(w http.ResponseWriter, _ *http.Request) {
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			if tc, ok := conn.(*net.TCPConn); ok {
				tc.SetLinger(0) // close with RST
			}
			conn.Close()
		}, want: outcome{Retryable: true, HasErr: true}},
		{name: "timeout", timeout: 50 * time.Millisecond, handler: func(w http.ResponseWriter, r *http.Request) {
			// Once the body is read, the server notices the client leaving.
			io.Copy(io.Discard, r.Body)
			<-r.Context().Done()
		}, want: outcome{Retryable: true, HasErr: true}},
	}
	sender := NewSender()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(tt.handler)
			defer srv.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			got := sender.Attempt(ctx, testEvent(t), srv.URL+"/sink", routing.FormatBinary, tt.timeout)
			if diff := cmp.Diff(tt.want, outcomeOf(got)); diff != "" {
				t.Errorf("Attempt (-want +got):\n%s\nerr: %v", diff, got.Err)
			}
		})
	}
}

func TestAttemptRetryAfter(t *testing.T) {
	inAnHour := time.Now().Add(time.Hour).UTC().Format(http.TimeFormat)
	tests := []struct {
		name       string
		code       int
		retryAfter string
		min, max   time.Duration
	}{
		{"429 with seconds", 429, "3", 3 * time.Second, 3 * time.Second},
		{"503 with seconds", 503, "120", 2 * time.Minute, 2 * time.Minute},
		{"429 with an HTTP-date", 429, inAnHour, 58 * time.Minute, time.Hour},
		{"503 with a date in the past", 503, "Mon, 02 Jan 2006 15:04:05 GMT", 0, 0},
		{"429 with garbage", 429, "soon", 0, 0},
		{"429 with negative seconds", 429, "-5", 0, 0},
		{"500 ignores Retry-After", 500, "3", 0, 0},
		{"404 ignores Retry-After", 404, "3", 0, 0},
	}
	sender := NewSender()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Retry-After", tt.retryAfter)
				w.WriteHeader(tt.code)
			}))
			defer srv.Close()
			got := sender.Attempt(context.Background(), testEvent(t), srv.URL, routing.FormatBinary, 10*time.Second)
			if got.RetryAfter < tt.min || got.RetryAfter > tt.max {
				t.Errorf("RetryAfter = %v, want between %v and %v", got.RetryAfter, tt.min, tt.max)
			}
		})
	}
}

// TestAttemptSendsTheEvent checks what the subscriber receives.
func TestAttemptSendsTheEvent(t *testing.T) {
	for _, format := range []string{routing.FormatBinary, routing.FormatJSON} {
		t.Run(format, func(t *testing.T) {
			type request struct {
				header http.Header
				body   []byte
				event  *event.Event
				err    error
			}
			got := make(chan request, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				r.Body = io.NopCloser(bytes.NewReader(body))
				e, err := cehttp.ReadRequest(r, 0)
				got <- request{r.Header.Clone(), body, e, err}
				w.WriteHeader(http.StatusAccepted)
			}))
			defer srv.Close()
			e := testEvent(t)
			if r := NewSender().Attempt(context.Background(), e, srv.URL, format, 10*time.Second); !r.Success {
				t.Fatalf("Attempt failed: %+v", r)
			}
			req := <-got
			if req.err != nil {
				t.Fatalf("subscriber could not read the event: %v", req.err)
			}
			if p := req.header.Get("Prefer"); p != "reply" {
				t.Errorf("Prefer = %q, want reply", p)
			}
			if diff := cmp.Diff(e, req.event, cmpopts.IgnoreFields(event.Event{}, "DataBase64")); diff != "" {
				t.Errorf("event (-sent +received):\n%s", diff)
			}
			switch format {
			case routing.FormatBinary:
				want := map[string]string{"Ce-Specversion": "1.0", "Ce-Id": "42", "Ce-Source": "/orders", "Ce-Type": "order.created", "Ce-Tenant": "acme", "Content-Type": "application/json"}
				for k, v := range want {
					if got := req.header.Get(k); got != v {
						t.Errorf("header %s = %q, want %q", k, got, v)
					}
				}
				if !bytes.Equal(req.body, e.DataEncoded) {
					t.Errorf("body = %q, want the payload %q", req.body, e.DataEncoded)
				}
			case routing.FormatJSON:
				if ct := req.header.Get("Content-Type"); ct != cehttp.MediaTypeStructured {
					t.Errorf("Content-Type = %q, want %q", ct, cehttp.MediaTypeStructured)
				}
			}
		})
	}
}

// TestAttemptReusesConnections checks that bodies are drained, whatever
// the response, so that a subscriber sees one connection.
func TestAttemptReusesConnections(t *testing.T) {
	var conns atomic.Int32
	var n atomic.Int32
	big := strings.Repeat("x", 64<<10)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		switch n.Add(1) % 3 {
		case 0:
			w.WriteHeader(500)
		case 1:
			replyHeaders(w)
			w.WriteHeader(200)
		default:
			w.WriteHeader(202)
		}
		io.WriteString(w, big)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	sender := NewSender()
	for range 30 {
		sender.Attempt(context.Background(), testEvent(t), srv.URL, routing.FormatBinary, 10*time.Second)
	}
	if c := conns.Load(); c != 1 {
		t.Errorf("30 sequential attempts opened %d connections, want 1", c)
	}
}

func TestAttemptBoundsBodies(t *testing.T) {
	big := strings.Repeat("y", 5000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/reply" {
			replyHeaders(w)
			w.WriteHeader(200)
		} else {
			w.WriteHeader(500)
		}
		io.WriteString(w, big)
	}))
	defer srv.Close()
	sender := NewSender(WithMaxReplyBytes(1000))
	got := sender.Attempt(context.Background(), testEvent(t), srv.URL+"/error", routing.FormatBinary, 10*time.Second)
	if len(got.Body) != MaxErrorBodyBytes {
		t.Errorf("error body kept %d bytes, want %d", len(got.Body), MaxErrorBodyBytes)
	}
	got = sender.Attempt(context.Background(), testEvent(t), srv.URL+"/reply", routing.FormatBinary, 10*time.Second)
	if got.Success || !got.Retryable || got.Err == nil {
		t.Errorf("reply over the limit: %+v, want a retryable failure", outcomeOf(got))
	}
}

func TestBackoff(t *testing.T) {
	const d = 200 * time.Millisecond
	tests := []struct {
		policy string
		delay  time.Duration
		n      int
		want   time.Duration
	}{
		{routing.BackoffLinear, d, 1, d},
		{routing.BackoffLinear, d, 2, d},
		{routing.BackoffLinear, d, 10, d},
		{routing.BackoffExponential, d, 1, d},
		{routing.BackoffExponential, d, 2, 2 * d},
		{routing.BackoffExponential, d, 3, 4 * d},
		{routing.BackoffExponential, d, 5, 16 * d},
		{"", d, 3, 4 * d},
		{routing.BackoffExponential, d, 80, time.Duration(1<<63 - 1)},
		{routing.BackoffExponential, time.Hour, 40, time.Duration(1<<63 - 1)},
		{routing.BackoffExponential, d, 0, 0},
		{routing.BackoffLinear, 0, 3, 0},
	}
	for _, tt := range tests {
		if got := Backoff(tt.policy, tt.delay, tt.n); got != tt.want {
			t.Errorf("Backoff(%q, %v, %d) = %v, want %v", tt.policy, tt.delay, tt.n, got, tt.want)
		}
	}
}

func TestRetryDelay(t *testing.T) {
	linear := &routing.Delivery{BackoffPolicy: routing.BackoffLinear, BackoffDelay: routing.Duration(time.Second)}
	capped := &routing.Delivery{BackoffPolicy: routing.BackoffExponential, BackoffDelay: routing.Duration(time.Second), RetryAfterMax: routing.Duration(5 * time.Second)}
	tests := []struct {
		name string
		d    *routing.Delivery
		n    int
		r    Result
		want time.Duration
	}{
		{"backoff alone", linear, 3, Result{StatusCode: 500}, time.Second},
		{"Retry-After longer than the backoff", linear, 1, Result{StatusCode: 429, RetryAfter: 3 * time.Second}, 3 * time.Second},
		{"backoff longer than Retry-After", capped, 4, Result{StatusCode: 503, RetryAfter: 2 * time.Second}, 8 * time.Second},
		{"Retry-After capped by retryAfterMax", capped, 1, Result{StatusCode: 429, RetryAfter: time.Minute}, 5 * time.Second},
		{"Retry-After uncapped without retryAfterMax", linear, 1, Result{StatusCode: 503, RetryAfter: time.Minute}, time.Minute},
		{"Retry-After ignored on 500", linear, 1, Result{StatusCode: 500, RetryAfter: time.Minute}, time.Second},
		{"no delivery options", nil, 2, Result{StatusCode: 500}, 0},
		{"no delivery options and Retry-After", nil, 2, Result{StatusCode: 429, RetryAfter: 4 * time.Second}, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RetryDelay(tt.d, tt.n, tt.r); got != tt.want {
				t.Errorf("RetryDelay = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestDeadLetter(t *testing.T) {
	long := bytes.Repeat([]byte("z"), 2000)
	tests := []struct {
		name     string
		r        Result
		wantCode int32
		wantData string
	}{
		{"HTTP error with a body", Result{StatusCode: 400, Body: []byte("bad event")}, 400, base64.StdEncoding.EncodeToString([]byte("bad event"))},
		{"HTTP error without a body", Result{StatusCode: 503}, 503, ""},
		{"body cut to 1024 characters", Result{StatusCode: 500, Body: long}, 500, base64.StdEncoding.EncodeToString(long)[:1024]},
		{"network error", Result{Err: io.ErrUnexpectedEOF, Retryable: true}, 500, base64.StdEncoding.EncodeToString([]byte("dispatch error: unexpected EOF"))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := testEvent(t)
			before := e.Clone()
			dl := DeadLetter(e, "http://127.0.0.1:9/sink", tt.r)
			if diff := cmp.Diff(&before, e); diff != "" {
				t.Errorf("DeadLetter changed the original event (-before +after):\n%s", diff)
			}
			if !bytes.Equal(dl.DataEncoded, e.DataEncoded) {
				t.Errorf("payload = %q, want %q", dl.DataEncoded, e.DataEncoded)
			}
			ext := dl.Extensions()
			if dest, _ := types.Format(ext[ExtensionErrorDest]); dest != "http://127.0.0.1:9/sink" {
				t.Errorf("%s = %q", ExtensionErrorDest, dest)
			}
			if code := ext[ExtensionErrorCode]; code != tt.wantCode {
				t.Errorf("%s = %#v, want %d", ExtensionErrorCode, code, tt.wantCode)
			}
			data, _ := ext[ExtensionErrorData].(string)
			if data != tt.wantData {
				t.Errorf("%s = %q, want %q", ExtensionErrorData, data, tt.wantData)
			}
			if len(data) > 1024 {
				t.Errorf("%s has %d characters, more than 1024", ExtensionErrorData, len(data))
			}
			if ext["tenant"] != "acme" {
				t.Errorf("the event's own extensions were lost: %v", ext)
			}
		})
	}
}
