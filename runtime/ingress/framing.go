package ingress

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
)

// A request with both Content-Length and Transfer-Encoding is framed one
// way by net/http (by its chunks) and possibly the other way by a proxy in
// front (by its length); what one takes for the body the other may take
// for a second request. RFC 9112 section 6.1 lets a server refuse such a
// request, and requires it to close the connection after answering. But
// net/http drops the Content-Length of a chunked request before a handler
// sees it, so the two cannot be told apart from the request. The framing
// listener reads the header block of each request as the connection's
// bytes pass, and the handler answers 400 to the request it marked.
//
// It follows only what it needs: the header block of each request, and
// the body of one framed by Content-Length, to find the next. After a
// request with a Transfer-Encoding it stops, since that request is the
// last the connection serves (closeAfterChunked); it stops too at anything
// it does not understand, where net/http refuses the request itself.

// maxScannedHeader bounds the header block kept while it is scanned;
// net/http refuses larger ones (MaxHeaderBytes) itself.
const maxScannedHeader = 1 << 20

// framingListener wraps every connection it accepts in a framingConn.
type framingListener struct{ net.Listener }

func (l framingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &framingConn{Conn: c}, nil
}

// framingConn scans the requests read from its connection. Reads come from
// the one goroutine net/http serves the connection on, but ambiguous is
// read from the handler's, so the marks are guarded.
type framingConn struct {
	net.Conn

	// Scanner state, touched by Read only.
	header        []byte
	bodyRemaining int64
	stopped       bool
	scanned       int

	mu sync.Mutex
	// ambiguous is the number (from 1) of the request that carried both
	// Content-Length and Transfer-Encoding, 0 when none did.
	ambiguous int

	// served counts the requests handed to a handler, in order.
	served atomic.Int64
}

func (c *framingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.scan(p[:n])
	}
	return n, err
}

// scan follows the request framing over b, the next bytes read.
func (c *framingConn) scan(b []byte) {
	for len(b) > 0 && !c.stopped {
		if c.bodyRemaining > 0 {
			skip := min(int64(len(b)), c.bodyRemaining)
			c.bodyRemaining -= skip
			b = b[skip:]
			continue
		}
		// Blank lines before a request line are skipped, as net/http
		// skips them.
		if len(c.header) == 0 {
			b = bytes.TrimLeft(b, "\r\n")
			if len(b) == 0 {
				return
			}
		}
		end := headerEnd(c.header, b)
		if end < 0 {
			if len(c.header)+len(b) > maxScannedHeader {
				c.stopped = true
				return
			}
			c.header = append(c.header, b...)
			return
		}
		c.header = append(c.header, b[:end]...)
		b = b[end:]
		c.request(c.header)
		c.header = c.header[:0]
	}
}

// headerEnd returns how many bytes of b complete the header block begun by
// kept (the index just past its blank line), -1 when b does not. It runs on
// every read of every connection, so it copies nothing.
func headerEnd(kept, b []byte) int {
	if len(b) == 0 {
		return -1
	}
	// The blank line may straddle what was kept and b.
	if n := len(kept); n > 0 {
		if kept[n-1] == '\n' {
			if b[0] == '\n' {
				return 1
			}
			if len(b) > 1 && b[0] == '\r' && b[1] == '\n' {
				return 2
			}
		}
		if n > 1 && kept[n-2] == '\n' && kept[n-1] == '\r' && b[0] == '\n' {
			return 1
		}
	}
	for i := 0; ; i++ {
		j := bytes.IndexByte(b[i:], '\n')
		if j < 0 {
			return -1
		}
		i += j
		// A line ends at i; the block ends if the next line is empty.
		switch rest := b[i+1:]; {
		case len(rest) > 0 && rest[0] == '\n':
			return i + 2
		case len(rest) > 1 && rest[0] == '\r' && rest[1] == '\n':
			return i + 3
		}
	}
}

// request reads one header block and sets up the scan of its body.
func (c *framingConn) request(block []byte) {
	c.scanned++
	var contentLength []byte
	var hasLength, hasEncoding bool
	_, rest, _ := bytes.Cut(block, []byte("\n")) // the request line
	for len(rest) > 0 {
		var line []byte
		line, rest, _ = bytes.Cut(rest, []byte("\n"))
		line = bytes.TrimRight(line, "\r")
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			continue
		}
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			hasLength, contentLength = true, bytes.TrimSpace(value)
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			hasEncoding = true
		}
	}
	switch {
	case hasEncoding:
		if hasLength {
			c.mu.Lock()
			c.ambiguous = c.scanned
			c.mu.Unlock()
		}
		c.stopped = true
	case hasLength:
		n, err := strconv.ParseInt(string(contentLength), 10, 64)
		if err != nil || n < 0 {
			c.stopped = true
			return
		}
		c.bodyRemaining = n
	}
}

// nextRequestIsAmbiguous counts a request handed to a handler and reports
// whether it carried both Content-Length and Transfer-Encoding.
func (c *framingConn) nextRequestIsAmbiguous() bool {
	n := c.served.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ambiguous != 0 && int64(c.ambiguous) == n
}

type framingConnKey struct{}

// withFramingConn is the ConnContext of a server on a framingListener.
func withFramingConn(ctx context.Context, c net.Conn) context.Context {
	if fc, ok := c.(*framingConn); ok {
		return context.WithValue(ctx, framingConnKey{}, fc)
	}
	return ctx
}

// refuseAmbiguousFraming answers 400 and closes the connection when r
// carried both Content-Length and Transfer-Encoding, and reports whether it
// did. Every request served on a framingListener must pass through it, in
// order, so that the requests are counted.
func refuseAmbiguousFraming(w http.ResponseWriter, r *http.Request) bool {
	fc, ok := r.Context().Value(framingConnKey{}).(*framingConn)
	if !ok || !fc.nextRequestIsAmbiguous() {
		return false
	}
	w.Header().Set("Connection", "close")
	writeText(w, http.StatusBadRequest, "a request may not carry both Content-Length and Transfer-Encoding (RFC 9112 section 6.1)")
	return true
}
