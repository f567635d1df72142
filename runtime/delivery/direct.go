package delivery

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/net/http/httpguts"
)

// directClient posts to plain-HTTP subscribers over kept-alive HTTP/1.1
// connections, writing each request and reading its response in the
// goroutine that sends it.
//
// Why not http.Transport: its connections are each served by a read loop
// and a write loop goroutine, so a request passes between three
// goroutines and back, and on a runtime that delivers tens of thousands of
// events a second those hand-offs cost about a fifth of a delivery's CPU.
// Only the connection handling is written here; the response is parsed by
// net/http's own ReadResponse. Everything it does not handle (https, a
// proxy, a host that is not plain ASCII) goes to the Transport, and the
// differential tests (direct_test.go) check that both send the same
// requests and read the same results.
type directClient struct {
	// dialer is the Transport's.
	dialer         *net.Dialer
	maxIdlePerHost int
	idleTimeout    time.Duration

	// transport is the Transport of the Sender's Client: its Proxy says
	// which requests must go through a proxy, and so through it.
	transport *http.Transport

	mu    sync.Mutex
	idle  map[string][]*directConn
	sweep *time.Timer
}

// directConn is one kept-alive connection and the reader of its
// responses.
type directConn struct {
	net.Conn
	br        *bufio.Reader
	bw        *bufio.Writer
	addr      string
	idleSince time.Time
}

// aLongTimeAgo is a deadline in the past: it makes blocked reads and
// writes of a connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

func newDirectClient(t *http.Transport, dialer *net.Dialer) *directClient {
	return &directClient{
		dialer:         dialer,
		maxIdlePerHost: t.MaxIdleConnsPerHost,
		idleTimeout:    t.IdleConnTimeout,
		idle:           map[string][]*directConn{},
		transport:      t,
	}
}

// canSend tells whether req can be sent directly: a POST to a plain-HTTP
// URL with an ASCII host that no proxy is configured for.
func (c *directClient) canSend(req *http.Request, extra http.Header) bool {
	if _, ok := extra["Host"]; ok {
		return false
	}
	if req.Method != http.MethodPost || req.ContentLength < 0 || req.Close ||
		(req.Body != nil && req.Body != http.NoBody && req.GetBody == nil) {
		return false
	}
	u := req.URL
	if u.Scheme != "http" || u.User != nil || (req.Host != "" && req.Host != u.Host) || !asciiHost(u.Host) {
		return false
	}
	if c.transport.Proxy != nil {
		// Without proxy settings in the environment, ProxyFromEnvironment
		// answers without parsing anything.
		if proxy, err := c.transport.Proxy(req); err != nil || proxy != nil {
			return false
		}
	}
	return true
}

func asciiHost(h string) bool {
	for i := 0; i < len(h); i++ {
		if c := h[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return h != ""
}

// roundTrip sends req and reads the head of its response. The response's
// body must be closed: that gives the connection back. A request on a
// kept-alive connection that the subscriber closed before answering is
// sent again on the next kept one, or a new one, as http.Transport does;
// a failure on a new connection is final.
//
// The request carries req.Header and extra, whose fields replace those of
// the same name in req.Header: the event's headers are shared by the
// deliveries of its fan-out, and are not copied to add a delivery's own.
func (c *directClient) roundTrip(req *http.Request, extra http.Header) (*http.Response, error) {
	ctx := req.Context()
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := errors.Join(checkHeader(req.Header), checkHeader(extra)); err != nil {
		return nil, err
	}
	addr := canonicalAddr(req.URL)
	body := req.Body
	for {
		conn, reused, err := c.get(ctx, addr)
		if err != nil {
			return nil, err
		}
		resp, err := c.exchange(ctx, conn, req, extra, body)
		if err == nil {
			return resp, nil
		}
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !reused || !closedBeforeAnswer(err) {
			return nil, err
		}
		// The body was read by the try that failed; a new connection
		// needs it again.
		if body != nil && body != http.NoBody {
			if req.GetBody == nil {
				return nil, err
			}
			if body, err = req.GetBody(); err != nil {
				return nil, err
			}
		}
	}
}

// exchange writes the request on conn and reads the head of the response,
// stopping both when ctx is done.
func (c *directClient) exchange(ctx context.Context, conn *directConn, req *http.Request, extra http.Header, body io.Reader) (*http.Response, error) {
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(aLongTimeAgo) })
	resp, err := c.writeAndRead(conn, req, extra, body)
	if err != nil {
		stop()
		return nil, err
	}
	resp.Body = &directBody{body: resp.Body, conn: conn, client: c, stop: stop, reuse: !resp.Close}
	return resp, nil
}

func (c *directClient) writeAndRead(conn *directConn, req *http.Request, extra http.Header, body io.Reader) (*http.Response, error) {
	writeHead(conn.bw, req, extra)
	if body != nil {
		n, err := io.Copy(conn.bw, body)
		if err != nil {
			return nil, err
		}
		if n != req.ContentLength {
			return nil, fmt.Errorf("delivery: the request body has %d bytes, not its Content-Length %d", n, req.ContentLength)
		}
	}
	if err := conn.bw.Flush(); err != nil {
		return nil, err
	}
	// ReadResponse reports a connection closed before the first byte as
	// io.ErrUnexpectedEOF, like one closed in the middle; only the first
	// may be sent again.
	if _, err := conn.br.Peek(1); err != nil {
		return nil, err
	}
	for {
		resp, err := http.ReadResponse(conn.br, req)
		if err != nil {
			return nil, err
		}
		switch {
		case resp.StatusCode == http.StatusSwitchingProtocols:
			// A POST of an event never asks to switch protocols: the
			// answer is a failure, and the connection is not the
			// subscriber's HTTP any more.
			resp.Close = true
		case resp.StatusCode >= 100 && resp.StatusCode < 200:
			// An informational answer comes before the final one.
			continue
		}
		return resp, nil
	}
}

// closedBeforeAnswer tells whether err says that a kept-alive connection
// was closed by the other end before any byte of an answer came: the
// subscriber closed it while it was idle.
func closedBeforeAnswer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// get returns an idle connection to addr, or a new one.
func (c *directClient) get(ctx context.Context, addr string) (*directConn, bool, error) {
	now := time.Now()
	c.mu.Lock()
	for conns := c.idle[addr]; len(conns) > 0; conns = c.idle[addr] {
		conn := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		c.idle[addr] = conns[:len(conns)-1]
		if now.Sub(conn.idleSince) < c.idleTimeout {
			c.mu.Unlock()
			return conn, true, nil
		}
		conn.Close()
	}
	c.mu.Unlock()
	nc, err := c.dialer.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	return &directConn{Conn: nc, br: bufio.NewReaderSize(nc, 4<<10), bw: bufio.NewWriterSize(nc, 8<<10), addr: addr}, false, nil
}

// put keeps conn for the next request to its address, closing the oldest
// idle connection beyond maxIdlePerHost.
func (c *directClient) put(conn *directConn) {
	conn.idleSince = time.Now()
	c.mu.Lock()
	conns := append(c.idle[conn.addr], conn)
	if len(conns) > c.maxIdlePerHost {
		conns[0].Close()
		conns = append(conns[:0], conns[1:]...)
	}
	c.idle[conn.addr] = conns
	if c.sweep == nil {
		c.sweep = time.AfterFunc(c.idleTimeout, c.closeIdleTooLong)
	}
	c.mu.Unlock()
}

// closeIdleTooLong closes the connections idle for longer than the idle
// timeout, as the Transport does, so that a subscriber no longer sent to
// keeps no connection open.
func (c *directClient) closeIdleTooLong() {
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.sweep = nil
	for addr, conns := range c.idle {
		kept := conns[:0]
		for _, conn := range conns {
			if now.Sub(conn.idleSince) >= c.idleTimeout {
				conn.Close()
				continue
			}
			kept = append(kept, conn)
		}
		clear(conns[len(kept):])
		if len(kept) == 0 {
			delete(c.idle, addr)
			continue
		}
		c.idle[addr] = kept
	}
	if len(c.idle) > 0 {
		c.sweep = time.AfterFunc(c.idleTimeout, c.closeIdleTooLong)
	}
}

// directBody is a response body whose Close gives its connection back
// when the body was read to its end and the response allows it.
type directBody struct {
	body   io.ReadCloser
	conn   *directConn
	client *directClient
	stop   func() bool
	reuse  bool
	eof    bool
	closed bool
}

func (b *directBody) Read(p []byte) (int, error) {
	n, err := b.body.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

func (b *directBody) Close() error {
	if b.closed {
		return nil
	}
	b.closed = true
	if !b.eof {
		// A body with nothing left is at its end without a read.
		var probe [1]byte
		if n, err := b.body.Read(probe[:0]); n == 0 && err == io.EOF {
			b.eof = true
		}
	}
	err := b.body.Close()
	// stop reports false when the context ended the exchange: the
	// connection's deadline is then in the past.
	// Bytes after the end of the response answer nothing that was asked:
	// the connection is out of step, as the Transport judges it too.
	if b.stop() && b.reuse && b.eof && err == nil && b.conn.br.Buffered() == 0 {
		b.client.put(b.conn)
		return nil
	}
	b.conn.Close()
	return err
}

// checkHeader refuses what net/http's Transport refuses: a header name
// that is not a token, or a value with a control character.
func checkHeader(h http.Header) error {
	for name, values := range h {
		if !httpguts.ValidHeaderFieldName(name) {
			return fmt.Errorf("net/http: invalid header field name %q", name)
		}
		for _, v := range values {
			if !httpguts.ValidHeaderFieldValue(v) {
				return fmt.Errorf("net/http: invalid header field value for %q", name)
			}
		}
	}
	return nil
}

// writeHead writes the request line and header block of req, with the
// fields of extra instead of those of req.Header of the same name, as
// net/http's Request.Write does for a Transport: Host, User-Agent and
// Content-Length first, then the other fields (in no particular order,
// which HTTP allows for fields of different names).
func writeHead(w *bufio.Writer, req *http.Request, extra http.Header) {
	w.WriteString("POST ")
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(req.URL.Host)
	w.WriteString("\r\n")
	_, ua := req.Header["User-Agent"]
	if _, ok := extra["User-Agent"]; !ok && !ua {
		w.WriteString("User-Agent: Go-http-client/1.1\r\n")
	}
	w.WriteString("Content-Length: ")
	var n [20]byte
	w.Write(strconv.AppendInt(n[:0], req.ContentLength, 10))
	w.WriteString("\r\n")
	for name, values := range req.Header {
		if _, replaced := extra[name]; !replaced {
			writeFields(w, name, values)
		}
	}
	for name, values := range extra {
		writeFields(w, name, values)
	}
	w.WriteString("\r\n")
}

func writeFields(w *bufio.Writer, name string, values []string) {
	switch name {
	case "Host", "Content-Length", "Transfer-Encoding", "Trailer", "Connection":
		return
	}
	for _, v := range values {
		w.WriteString(name)
		w.WriteString(": ")
		w.WriteString(v)
		w.WriteString("\r\n")
	}
}

// canonicalAddr is u's host with the default port of http when it has
// none.
func canonicalAddr(u *url.URL) string {
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return net.JoinHostPort(u.Hostname(), port)
}
