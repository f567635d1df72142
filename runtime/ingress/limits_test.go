package ingress_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
)

// rawConn opens a TCP connection to the engine's listener.
func rawConn(t *testing.T, e *engine.Engine) net.Conn {
	t.Helper()
	u, err := url.Parse(e.URL())
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// closedWithin reads from c until the server closes it, and reports how long
// that took, or fails after limit.
func closedWithin(t *testing.T, c net.Conn, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	if err := c.SetReadDeadline(start.Add(limit)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, c)
	took := time.Since(start)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("the server kept the connection open for %s", limit)
	}
	return took
}

const ingressHeaders = "POST /brokers/ns/b HTTP/1.1\r\nHost: knc\r\nCe-Specversion: 1.0\r\nCe-Id: slow\r\nCe-Source: /test\r\nCe-Type: t\r\n"

// TestSlowlorisIsDisconnected trickles header lines, each well within any
// per-read timeout, and checks that the server hangs up once
// ReadHeaderTimeout has passed since the request began, while serving
// other clients meanwhile.
func TestSlowlorisIsDisconnected(t *testing.T) {
	sub := newRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil)),
		Limits: ingress.Limits{ReadHeaderTimeout: 500 * time.Millisecond}})
	c := rawConn(t, e)
	began := time.Now()
	if _, err := io.WriteString(c, "POST /brokers/ns/b HTTP/1.1\r\nHost: knc\r\n"); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := fmt.Fprintf(c, "X-Slow-%d: x\r\n", i); err != nil {
				return
			}
		}
	}()
	if code := post(t, e.URL()+"/brokers/ns/b", "meanwhile", "t"); code != http.StatusAccepted {
		t.Errorf("a normal request during the slow one = %d, want 202", code)
	}
	closedWithin(t, c, 5*time.Second)
	took := time.Since(began)
	t.Logf("a client trickling its headers was disconnected after %s", took.Round(time.Millisecond))
	if took < 400*time.Millisecond {
		t.Errorf("disconnected after %s, before ReadHeaderTimeout", took)
	}
}

// TestSlowBodyIsCutOff sends the headers at once and the body slowly: at
// ReadTimeout the client gets 408 Request Timeout, as docs/security.md
// says, the connection is closed, and the event is not accepted; whether
// the body has a length or is chunked, binary or structured.
func TestSlowBodyIsCutOff(t *testing.T) {
	const structured = "POST /brokers/ns/b HTTP/1.1\r\nHost: knc\r\nContent-Type: application/cloudevents+json\r\n"
	tests := []struct {
		name, headers string
		// chunk is written every 50 ms.
		chunk string
	}{
		{"binary with a length", ingressHeaders + "Content-Length: 1000\r\n\r\n", "x"},
		{"binary chunked", ingressHeaders + "Transfer-Encoding: chunked\r\n\r\n", "1\r\nx\r\n"},
		{"structured", structured + "Content-Length: 1000\r\n\r\n", " "},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			sub := newRecorder(t)
			const readTimeout = 500 * time.Millisecond
			e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil)),
				// Equal read and write timeouts, as the defaults are: the
				// write deadline has passed too when the 408 is written.
				Limits: ingress.Limits{ReadTimeout: readTimeout, WriteTimeout: readTimeout}})
			// The server's read deadline starts when it accepts the
			// connection, so the clock starts before the dial.
			began := time.Now()
			c := rawConn(t, e)
			if _, err := io.WriteString(c, tc.headers); err != nil {
				t.Fatal(err)
			}
			go func() {
				for range 100 {
					if _, err := io.WriteString(c, tc.chunk); err != nil {
						return
					}
					time.Sleep(50 * time.Millisecond)
				}
			}()
			if err := c.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
				t.Fatal(err)
			}
			br := bufio.NewReader(c)
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("no answer to a body sent too slowly: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			took := time.Since(began)
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Errorf("a body sent too slowly got %d %q, want 408", resp.StatusCode, body)
			}
			if took < readTimeout || took > readTimeout+2*time.Second {
				t.Errorf("answered after %s, want soon after the read timeout of %s", took, readTimeout)
			}
			if !resp.Close {
				t.Error("the connection of a timed-out body is kept open")
			}
			if _, err := br.ReadByte(); err == nil {
				t.Error("the server wrote more after the 408")
			}
			if n := sub.count(); n != 0 {
				t.Errorf("the subscriber got %d events from an incomplete request", n)
			}
		})
	}
}

func TestHeaderLimit(t *testing.T) {
	sub := newRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil)),
		Limits: ingress.Limits{MaxHeaderBytes: 4 << 10}})
	tests := []struct {
		name string
		size int
		want int
	}{
		{"small", 1 << 10, http.StatusAccepted},
		{"over the limit", 16 << 10, http.StatusRequestHeaderFieldsTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(http.MethodPost, e.URL()+"/brokers/ns/b", strings.NewReader("{}"))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Ce-Specversion", "1.0")
			req.Header.Set("Ce-Id", tt.name)
			req.Header.Set("Ce-Source", "/test")
			req.Header.Set("Ce-Type", "t")
			req.Header.Set("Ce-Padding", strings.Repeat("p", tt.size))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tt.want {
				t.Errorf("status = %d, want %d", resp.StatusCode, tt.want)
			}
		})
	}
}

// TestIdleConnectionsAreClosed checks that a keep-alive connection that
// carries no further request is closed after IdleTimeout.
func TestIdleConnectionsAreClosed(t *testing.T) {
	sub := newRecorder(t)
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil)),
		Limits: ingress.Limits{IdleTimeout: 300 * time.Millisecond}})
	c := rawConn(t, e)
	if _, err := io.WriteString(c, ingressHeaders+"Content-Length: 2\r\n\r\n{}"); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("status = %d, want 202", resp.StatusCode)
	}
	took := closedWithin(t, c, 5*time.Second)
	t.Logf("an idle keep-alive connection was closed after %s", took.Round(time.Millisecond))
}

// TestConcurrencyLimitAnswers429 holds MaxConcurrentRequests requests open
// by sending their bodies slowly, and checks that one more is refused at
// once with 429 and Retry-After, while the probes and metrics still answer,
// and that requests are accepted again once the held ones finish.
func TestConcurrencyLimitAnswers429(t *testing.T) {
	sub := newRecorder(t)
	reg := prometheus.NewRegistry()
	e := startEngine(t, engine.Options{Table: brokerTable(trigger("a", sub.srv.URL, nil)), Registry: reg,
		Limits: ingress.Limits{MaxConcurrentRequests: 2, RetryAfter: 2 * time.Second}})
	var held []net.Conn
	for i := range 2 {
		c := rawConn(t, e)
		if _, err := fmt.Fprintf(c, "POST /brokers/ns/b HTTP/1.1\r\nHost: knc\r\nCe-Specversion: 1.0\r\nCe-Id: held-%d\r\nCe-Source: /test\r\nCe-Type: t\r\nContent-Length: 2\r\n\r\n{", i); err != nil {
			t.Fatal(err)
		}
		held = append(held, c)
	}
	eventually(t, 5*time.Second, "two requests in progress", func() bool { return ingress.IngressInFlight(e.Ingress()) == 2 })

	req, err := http.NewRequest(http.MethodPost, e.URL()+"/brokers/ns/b", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", "over")
	req.Header.Set("Ce-Source", "/test")
	req.Header.Set("Ce-Type", "t")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") != "2" {
		t.Errorf("request over the bound = %d with Retry-After %q, want 429 with 2", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, path := range []string{"/readyz", "/metrics"} {
		r, err := http.Get(e.URL() + path)
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusOK {
			t.Errorf("GET %s at the bound = %d, want 200", path, r.StatusCode)
		}
	}

	for _, c := range held {
		if _, err := io.WriteString(c, "}"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Errorf("held request = %d, want 202", resp.StatusCode)
		}
	}
	if code := post(t, e.URL()+"/brokers/ns/b", "after", "t"); code != http.StatusAccepted {
		t.Errorf("request after the held ones finished = %d, want 202", code)
	}
	if got := counter(t, reg, "knc_ingress_rejected_total"); got != 1 {
		t.Errorf("knc_ingress_rejected_total = %v, want 1", got)
	}
}
