package ingress

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/net/http/httpguts"
)

// The lean server serves the ingress's common request on plain HTTP
// itself: a POST in HTTP/1.1 to a path of plain characters, framed by one
// Content-Length, with ordinary headers, whose header block fits its
// buffer. A connection that carries anything else (another method or
// version, a Transfer-Encoding, Expect, an escaped or absolute target, a
// header net/http might read in another way) is handed, with the bytes
// already read, to the net/http server, which serves it from then on as
// it serves every TLS connection. Both call the same handler.
//
// It exists for the cost of an event. Per request, net/http starts a
// background read of the connection, makes a cancellable context, sets
// four deadlines and builds a response writer; this serves a connection
// from one goroutine, sets at most one read and one write deadline when
// the bytes are not already at hand, keeps its buffers across requests
// and writes each answer with one write. net/http stays the reference:
// lean_test.go sends the same bytes to both and compares what the
// handler saw and what the client got.

const (
	// leanBufferSize holds a request's header block; a larger one is
	// handed to net/http, which allows up to Limits.MaxHeaderBytes. With
	// the answer's buffer it keeps a connection's memory near net/http's
	// (a 4 KiB reader and a 4 KiB writer).
	leanBufferSize = 8 << 10
	// maxLeanHeaderLines bounds the header lines served here.
	maxLeanHeaderLines = 100
	// maxDiscardedBody is how much of a body its handler did not read
	// is read and dropped to keep the connection, as net/http does
	// (maxPostHandlerReadBytes); above it the connection is closed.
	maxDiscardedBody = 256 << 10
	// lingerBeforeClose lets a client read the last answer before the
	// connection closes, so that request bytes it sent unread do not turn
	// the close into a reset that loses the answer (as net/http's
	// rstAvoidanceDelay).
	lingerBeforeClose = 500 * time.Millisecond
)

// leanServer accepts the plain-HTTP connections of the ingress listener.
type leanServer struct {
	handler http.Handler
	limits  Limits
	log     *slog.Logger
	// fallback receives the connections net/http serves.
	fallback *handoffListener
	// httpServer is what http.ServerContextKey carries, as on net/http.
	httpServer *http.Server

	// served counts the requests served here rather than by net/http.
	served atomic.Int64

	mu      sync.Mutex
	ln      net.Listener
	conns   map[*leanConn]struct{}
	closing bool
}

func newLeanServer(h http.Handler, limits Limits, log *slog.Logger, httpServer *http.Server, addr net.Addr) *leanServer {
	return &leanServer{
		handler:    h,
		limits:     limits,
		log:        log,
		fallback:   newHandoffListener(addr),
		httpServer: httpServer,
		conns:      map[*leanConn]struct{}{},
	}
}

// Serve accepts connections on ln until Shutdown or an error of ln.
func (s *leanServer) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return http.ErrServerClosed
	}
	s.ln = ln
	s.mu.Unlock()
	var backoff time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if s.isClosing() {
				return http.ErrServerClosed
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				// Out of file descriptors and the like: wait, as
				// net/http does, instead of spinning.
				backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
				s.log.Warn("accepting a connection failed; retrying", "error", err, "after", backoff)
				time.Sleep(backoff)
				continue
			}
			return err
		}
		backoff = 0
		lc := s.newConn(c)
		if lc == nil {
			_ = c.Close()
			continue
		}
		go lc.serve()
	}
}

func (s *leanServer) isClosing() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closing
}

// Shutdown stops accepting and closes the connections waiting for a
// request; those serving one close after their answer.
func (s *leanServer) Shutdown() {
	s.mu.Lock()
	s.closing = true
	ln := s.ln
	var idle []*leanConn
	for lc := range s.conns {
		if lc.idle.Load() {
			idle = append(idle, lc)
		}
	}
	s.mu.Unlock()
	if ln != nil {
		_ = ln.Close()
	}
	for _, lc := range idle {
		_ = lc.c.Close()
	}
	_ = s.fallback.Close()
}

// Close closes every connection the lean server still serves.
func (s *leanServer) Close() {
	s.Shutdown()
	s.mu.Lock()
	defer s.mu.Unlock()
	for lc := range s.conns {
		_ = lc.c.Close()
	}
}

func (s *leanServer) newConn(c net.Conn) *leanConn {
	ctx := context.WithValue(context.Background(), http.ServerContextKey, s.httpServer)
	ctx = context.WithValue(ctx, http.LocalAddrContextKey, c.LocalAddr())
	ctx, cancel := context.WithCancel(ctx)
	lc := &leanConn{
		srv:        s,
		c:          c,
		br:         bufio.NewReaderSize(c, leanBufferSize),
		cancel:     cancel,
		remoteAddr: c.RemoteAddr().String(),
		header:     http.Header{},
		reqHeader:  http.Header{},
	}
	lc.proto = (&http.Request{}).WithContext(ctx)
	lc.idle.Store(true)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closing {
		cancel()
		return nil
	}
	s.conns[lc] = struct{}{}
	return lc
}

func (s *leanServer) forget(lc *leanConn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.conns, lc)
}

// leanConn is one connection, served by one goroutine.
type leanConn struct {
	srv        *leanServer
	c          net.Conn
	br         *bufio.Reader
	cancel     context.CancelFunc
	remoteAddr string
	// proto carries the connection's context into each request.
	proto *http.Request
	idle  atomic.Bool

	// Kept across requests.
	req       requestAndURL
	reqHeader http.Header
	values    []string
	body      leanBody
	header    http.Header // the handler's response header
	out       []byte      // the answer being written
}

// serve reads and answers requests until the connection closes or is
// handed over.
func (lc *leanConn) serve() {
	handedOver := false
	defer func() {
		lc.cancel()
		lc.srv.forget(lc)
		if !handedOver {
			_ = lc.c.Close()
		}
	}()
	limits := lc.srv.limits
	for first := true; ; first = false {
		var start time.Time
		headerDeadline := false
		switch {
		case first:
			// As net/http, the first request's headers are due within
			// ReadHeaderTimeout of the connection.
			lc.idle.Store(true)
			start = time.Now()
			_ = lc.c.SetReadDeadline(start.Add(limits.ReadHeaderTimeout))
			headerDeadline = true
			if _, err := lc.br.Peek(1); err != nil {
				return
			}
		case lc.br.Buffered() < 4:
			// Between requests net/http waits for four bytes within
			// IdleTimeout, and closes without an answer when they do not
			// come.
			lc.idle.Store(true)
			if lc.srv.isClosing() {
				return
			}
			_ = lc.c.SetReadDeadline(time.Now().Add(limits.IdleTimeout))
			if _, err := lc.br.Peek(4); err != nil {
				return
			}
			start = time.Now()
		default:
			start = time.Now()
		}
		lc.idle.Store(false)
		block, err := lc.readHeaderBlock(start, headerDeadline)
		if err != nil {
			return
		}
		var req *http.Request
		if block != nil {
			req = lc.parse(block)
		}
		if req == nil {
			handedOver = lc.handOver()
			return
		}
		_, _ = lc.br.Discard(len(block))
		lc.srv.served.Add(1)
		if !lc.serveRequest(req, start) {
			return
		}
	}
}

// readHeaderBlock returns the header block of the next request, from the
// first byte through the blank line, still buffered; nil when it is not
// one the lean server reads, which hands the connection over.
func (lc *leanConn) readHeaderBlock(start time.Time, deadlineSet bool) ([]byte, error) {
	for {
		buf, _ := lc.br.Peek(lc.br.Buffered())
		if len(buf) > 0 && (buf[0] == '\r' || buf[0] == '\n') {
			return nil, nil
		}
		end, plain := headerBlockEnd(buf)
		if !plain {
			return nil, nil
		}
		if end > 0 {
			if end > lc.srv.limits.MaxHeaderBytes {
				return nil, nil
			}
			return buf[:end], nil
		}
		if len(buf) >= lc.br.Size() {
			return nil, nil
		}
		if !deadlineSet {
			deadlineSet = true
			_ = lc.c.SetReadDeadline(start.Add(lc.srv.limits.ReadHeaderTimeout))
		}
		if _, err := lc.br.Peek(len(buf) + 1); err != nil {
			if errors.Is(err, io.EOF) {
				// net/http answers a request cut short.
				return nil, nil
			}
			return nil, err
		}
	}
}

// headerBlockEnd returns the length of the header block that begins b,
// through its blank line, or 0 when b does not hold all of it; plain is
// false at a line that does not end in CRLF or a byte net/http might read
// in another way, which the lean server leaves to net/http.
func headerBlockEnd(b []byte) (end int, plain bool) {
	lineStart := 0
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '\n':
			if i == 0 || b[i-1] != '\r' {
				return 0, false
			}
			if i == lineStart+1 {
				return i + 1, true
			}
			lineStart = i + 1
		case c == '\r':
			if i+1 < len(b) && b[i+1] != '\n' {
				return 0, false
			}
		case c == 0:
			return 0, false
		}
	}
	return 0, true
}

// parse reads a header block into a request for the handler, nil when the
// request is not one the lean server serves.
func (lc *leanConn) parse(block []byte) *http.Request {
	line, rest, _ := bytes.Cut(block, []byte("\r\n"))
	target, ok := bytes.CutPrefix(line, []byte("POST "))
	if !ok {
		return nil
	}
	target, ok = bytes.CutSuffix(target, []byte(" HTTP/1.1"))
	if !ok || !plainPath(target) {
		return nil
	}
	// One string holds every name and value: they are substrings of it.
	text := string(rest)
	lines := bytes.Count(rest, []byte("\r\n")) - 1
	if lines > maxLeanHeaderLines {
		return nil
	}
	// The request, its header and their values are the connection's,
	// reused by its next request: a handler does not keep them past its
	// return (the ingress's handler copies what it keeps).
	header := lc.reqHeader
	clear(header)
	if cap(lc.values) < lines {
		lc.values = make([]string, lines)
	}
	values := lc.values[:lines]
	var host, contentLength string
	var hosts, lengths int
	closeAfter := false
	pos := 0
	for n := 0; ; n++ {
		lineLen := strings.Index(text[pos:], "\r\n")
		if lineLen <= 0 {
			break // the blank line that ends the block
		}
		eol := pos + lineLen
		c := strings.IndexByte(text[pos:eol], ':')
		if c <= 0 {
			return nil
		}
		colon := pos + c
		key, ok := canonicalKey(text[pos:colon])
		if !ok {
			return nil
		}
		value := trimSpaceTab(text[colon+1 : eol])
		if !httpguts.ValidHeaderFieldValue(value) {
			return nil
		}
		switch key {
		case "Host":
			host, hosts = value, hosts+1
		case "Content-Length":
			contentLength, lengths = value, lengths+1
		case "Connection":
			switch {
			case asciiEqualFold(value, "close"):
				closeAfter = true
			case asciiEqualFold(value, "keep-alive"):
			default:
				return nil
			}
		case "Transfer-Encoding", "Expect", "Upgrade", "Trailer", "Te", "Pragma", "Http2-Settings":
			return nil
		}
		values[n] = value
		if prev, ok := header[key]; ok {
			header[key] = append(prev, value)
		} else {
			header[key] = values[n : n+1 : n+1]
		}
		pos = eol + 2
	}
	if hosts != 1 || !httpguts.ValidHostHeader(host) || lengths != 1 {
		return nil
	}
	length, ok := parseLength(contentLength)
	if !ok {
		return nil
	}
	delete(header, "Host")
	path := string(target)
	if !isIngressPath(path) {
		return nil
	}
	r := &lc.req
	*r = requestAndURL{}
	r.url.Path = path
	r.req = *lc.proto
	r.req.Method = http.MethodPost
	r.req.URL = &r.url
	r.req.Proto, r.req.ProtoMajor, r.req.ProtoMinor = "HTTP/1.1", 1, 1
	r.req.Header = header
	r.req.ContentLength = length
	r.req.Host = host
	r.req.RemoteAddr = lc.remoteAddr
	r.req.RequestURI = path
	r.req.Close = closeAfter
	return &r.req
}

// requestAndURL is a request and its URL.
type requestAndURL struct {
	req http.Request
	url url.URL
}

// plainPath reports whether target is an origin-form path of characters
// that read the same escaped or not, so that its URL is its path.
func plainPath(target []byte) bool {
	if len(target) == 0 || target[0] != '/' {
		return false
	}
	for _, c := range target {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c == '/', c == '-', c == '.', c == '_', c == '~':
		default:
			return false
		}
	}
	return true
}

func trimSpaceTab(s string) string {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	for len(s) > 0 && (s[len(s)-1] == ' ' || s[len(s)-1] == '\t') {
		s = s[:len(s)-1]
	}
	return s
}

func asciiEqualFold(s, lower string) bool {
	if len(s) != len(lower) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != lower[i] {
			return false
		}
	}
	return true
}

// parseLength reads a Content-Length of digits only, as net/http does.
func parseLength(s string) (int64, bool) {
	if s == "" || len(s) > 18 {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	return n, err == nil
}

// canonicalKey returns the canonical form of a header name of token
// characters (textproto.CanonicalMIMEHeaderKey), without allocating for
// one already canonical or a common one; ok is false for any other name.
func canonicalKey(name string) (string, bool) {
	if len(name) == 0 || len(name) > 64 {
		return "", false
	}
	var buf [64]byte
	canonical := true
	upper := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !httpguts.IsTokenRune(rune(c)) {
			return "", false
		}
		switch {
		case upper && 'a' <= c && c <= 'z':
			c -= 'a' - 'A'
			canonical = false
		case !upper && 'A' <= c && c <= 'Z':
			c += 'a' - 'A'
			canonical = false
		}
		buf[i] = c
		upper = c == '-'
	}
	if canonical {
		return name, true
	}
	key := buf[:len(name)]
	if common, ok := commonHeaderKeys[string(key)]; ok {
		return common, true
	}
	return string(key), true
}

// commonHeaderKeys are the names of CloudEvents requests, kept to spare
// an allocation when a client sends them in another case.
var commonHeaderKeys = func() map[string]string {
	m := map[string]string{}
	for _, k := range []string{
		"Accept", "Accept-Encoding", "Authorization", "Connection", "Content-Length", "Content-Type", "Host", "User-Agent",
		"Ce-Id", "Ce-Source", "Ce-Specversion", "Ce-Type", "Ce-Subject", "Ce-Time", "Ce-Dataschema", "Ce-Datacontenttype",
		"Ce-Knativebrokerttl", "Ce-Traceparent", "Ce-Tracestate", "Ce-Partitionkey", "Ce-Loadsent",
		"Traceparent", "Tracestate", "Baggage", "Kn-Namespace", "Prefer", "X-Request-Id",
	} {
		m[k] = k
	}
	return m
}()

// serveRequest runs the handler and writes its answer; false ends the
// connection.
func (lc *leanConn) serveRequest(req *http.Request, start time.Time) (keep bool) {
	limits := lc.srv.limits
	if limits.WriteTimeout > 0 {
		_ = lc.c.SetWriteDeadline(time.Now().Add(limits.WriteTimeout))
	}
	lc.body.reset(lc, req.ContentLength, start.Add(limits.ReadTimeout))
	req.Body = &lc.body
	w := leanResponse{conn: lc, req: req, header: lc.header, closeAfter: req.Close}
	clear(w.header)
	if !lc.runHandler(&w, req) {
		return false
	}
	w.finish()
	if _, err := lc.c.Write(lc.out); err != nil {
		return false
	}
	if len(lc.out) > 4<<10 {
		lc.out = nil
	}
	if w.closeAfter {
		lc.linger()
		return false
	}
	return true
}

// runHandler calls the handler; false when it panicked, which closes the
// connection without an answer, as net/http does.
func (lc *leanConn) runHandler(w *leanResponse, req *http.Request) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			ok = false
			if v != http.ErrAbortHandler {
				lc.srv.log.Error("panic serving a request", "remote", lc.remoteAddr, "panic", v, "stack", string(debug.Stack()))
			}
		}
	}()
	lc.srv.handler.ServeHTTP(w, req)
	return true
}

// linger closes the writing side, lets the client read the answer, then
// closes.
func (lc *leanConn) linger() {
	if tc, ok := lc.c.(interface{ CloseWrite() error }); ok {
		_ = tc.CloseWrite()
	}
	_ = lc.c.SetReadDeadline(time.Now().Add(lingerBeforeClose))
	_, _ = io.Copy(io.Discard, lc.br)
}

// handOver gives the connection, with what was read of it, to net/http;
// false when net/http no longer takes connections.
func (lc *leanConn) handOver() bool {
	_ = lc.c.SetDeadline(time.Time{})
	buffered, _ := lc.br.Peek(lc.br.Buffered())
	c := &prefixConn{Conn: lc.c, prefix: bytes.Clone(buffered)}
	return lc.srv.fallback.give(&framingConn{Conn: c})
}

// prefixConn reads prefix before the connection.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}

// handoffListener is what the net/http server accepts handed-over
// connections from.
type handoffListener struct {
	addr   net.Addr
	conns  chan net.Conn
	done   chan struct{}
	closed sync.Once
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{addr: addr, conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// leanBody is a request's body: the next ContentLength bytes of the
// connection.
type leanBody struct {
	conn        *leanConn
	remaining   int64
	deadline    time.Time
	deadlineSet bool
	closed      bool
	// failed is set by a read that did not reach the end: what is left of
	// the body on the connection is unknown.
	failed bool
}

func (b *leanBody) reset(lc *leanConn, length int64, deadline time.Time) {
	*b = leanBody{conn: lc, remaining: length, deadline: deadline}
}

func (b *leanBody) Read(p []byte) (int, error) {
	if b.closed {
		return 0, http.ErrBodyReadAfterClose
	}
	return b.read(p)
}

func (b *leanBody) read(p []byte) (int, error) {
	if b.remaining <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > b.remaining {
		p = p[:b.remaining]
	}
	if b.conn.br.Buffered() == 0 && !b.deadlineSet {
		b.deadlineSet = true
		_ = b.conn.c.SetReadDeadline(b.deadline)
	}
	n, err := b.conn.br.Read(p)
	b.remaining -= int64(n)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.failed = true
		return n, err
	}
	if b.remaining == 0 {
		return n, io.EOF
	}
	return n, nil
}

// Close reads what is left of the body, as net/http's does.
func (b *leanBody) Close() error {
	if b.closed {
		return nil
	}
	err := b.discard()
	b.closed = true
	return err
}

// discard reads and drops the rest of the body.
func (b *leanBody) discard() error {
	var buf [4 << 10]byte
	for b.remaining > 0 && !b.failed {
		if _, err := b.read(buf[:]); err != nil && err != io.EOF {
			return err
		}
	}
	if b.failed {
		return io.ErrUnexpectedEOF
	}
	return nil
}

// leanResponse is the handler's ResponseWriter: it keeps the answer until
// the handler returns, then writes it at once.
type leanResponse struct {
	conn        *leanConn
	req         *http.Request
	header      http.Header
	status      int
	wroteHeader bool
	body        []byte
	closeAfter  bool
}

func (w *leanResponse) Header() http.Header { return w.header }

func (w *leanResponse) WriteHeader(code int) {
	if w.wroteHeader {
		return
	}
	if code < 100 || code > 999 {
		panic("invalid WriteHeader code " + strconv.Itoa(code))
	}
	if code < 200 {
		// Informational answers are not part of the ingress's protocol;
		// net/http would send them ahead, here they are dropped.
		return
	}
	w.wroteHeader = true
	w.status = code
}

func (w *leanResponse) Write(p []byte) (int, error) {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	if !bodyAllowed(w.status) {
		return 0, http.ErrBodyNotAllowed
	}
	w.body = append(w.body, p...)
	return len(p), nil
}

// SetWriteDeadline serves http.ResponseController.
func (w *leanResponse) SetWriteDeadline(t time.Time) error { return w.conn.c.SetWriteDeadline(t) }

func bodyAllowed(status int) bool {
	return (status < 100 || status > 199) && status != http.StatusNoContent && status != http.StatusNotModified
}

// finish renders the answer into the connection's output buffer, with the
// headers net/http adds to a handler's: Date, Content-Length, a sniffed
// Content-Type, and Connection: close when the connection ends after it.
func (w *leanResponse) finish() {
	if !w.wroteHeader {
		w.WriteHeader(http.StatusOK)
	}
	h := w.header
	if httpguts.HeaderValuesContainsToken(h["Connection"], "close") {
		w.closeAfter = true
	}
	body := &w.conn.body
	if !w.closeAfter && w.req.ContentLength != 0 {
		switch {
		case body.closed:
			if body.failed {
				w.closeAfter = true
			}
		case body.failed:
			w.closeAfter = true
		case body.remaining == 0:
		case body.remaining >= maxDiscardedBody:
			w.closeAfter = true
		default:
			if body.discard() != nil {
				w.closeAfter = true
			}
		}
	}
	out := w.conn.out[:0]
	out = append(out, "HTTP/1.1 "...)
	out = strconv.AppendInt(out, int64(w.status), 10)
	out = append(out, ' ')
	out = append(out, http.StatusText(w.status)...)
	out = append(out, "\r\n"...)
	keys := make([]string, 0, len(h))
	for k := range h {
		switch k {
		case "Connection":
			if w.closeAfter {
				continue
			}
		case "Date", "Transfer-Encoding":
			continue
		}
		if !httpguts.ValidHeaderFieldName(k) {
			continue
		}
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			out = appendHeaderLine(out, k, v)
		}
	}
	out = append(out, "Date: "...)
	out = append(out, httpDate()...)
	out = append(out, "\r\n"...)
	if bodyAllowed(w.status) {
		if _, ok := h["Content-Length"]; !ok {
			out = append(out, "Content-Length: "...)
			out = strconv.AppendInt(out, int64(len(w.body)), 10)
			out = append(out, "\r\n"...)
		}
		if _, ok := h["Content-Type"]; !ok && len(w.body) > 0 {
			out = appendHeaderLine(out, "Content-Type", http.DetectContentType(w.body))
		}
	}
	if w.closeAfter {
		out = append(out, "Connection: close\r\n"...)
	}
	out = append(out, "\r\n"...)
	if bodyAllowed(w.status) {
		out = append(out, w.body...)
	}
	w.conn.out = out
}

// appendHeaderLine appends "key: value\r\n", with line breaks and NULs in
// value replaced as net/http replaces them.
func appendHeaderLine(out []byte, key, value string) []byte {
	isSpace := func(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
	for len(value) > 0 && isSpace(value[0]) {
		value = value[1:]
	}
	for len(value) > 0 && isSpace(value[len(value)-1]) {
		value = value[:len(value)-1]
	}
	out = append(out, key...)
	out = append(out, ": "...)
	start := len(out)
	out = append(out, value...)
	for i := start; i < len(out); i++ {
		if out[i] == '\r' || out[i] == '\n' {
			out[i] = ' '
		}
	}
	return append(out, "\r\n"...)
}

// httpDate is the Date of an answer, formatted once a second.
func httpDate() string {
	now := time.Now()
	sec := now.Unix()
	if d := cachedDate.Load(); d != nil && d.sec == sec {
		return d.text
	}
	d := &formattedDate{sec: sec, text: now.UTC().Format(http.TimeFormat)}
	cachedDate.Store(d)
	return d.text
}

type formattedDate struct {
	sec  int64
	text string
}

var cachedDate atomic.Pointer[formattedDate]
