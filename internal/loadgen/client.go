package loadgen

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"time"
)

// conn is one keep-alive HTTP/1.1 connection that sends one request at a
// time.
type conn struct {
	addr string
	c    net.Conn
	r    *bufio.Reader
	buf  []byte
}

func dial(addr string) (*conn, error) {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	return &conn{addr: addr, c: c, r: bufio.NewReaderSize(c, 16<<10), buf: make([]byte, 0, 1024)}, nil
}

func (c *conn) close() {
	if c.c != nil {
		_ = c.c.Close()
		c.c = nil
	}
}

// do writes req and reads the response's status code, discarding its body.
// reuse is false when the server asked to close the connection.
func (c *conn) do(req []byte) (status int, reuse bool, err error) {
	if _, err := c.c.Write(req); err != nil {
		return 0, false, err
	}
	return readResponse(c.r)
}

var errMalformed = errors.New("malformed HTTP response")

// readResponse reads one HTTP/1.1 response, headers and body.
func readResponse(r *bufio.Reader) (status int, reuse bool, err error) {
	line, err := r.ReadSlice('\n')
	if err != nil {
		return 0, false, err
	}
	// "HTTP/1.1 202 Accepted\r\n"
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) {
		return 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, false, fmt.Errorf("%w: status line %q", errMalformed, line)
	}
	reuse = line[7] == '1'
	length, chunked := int64(-1), false
	for {
		line, err = r.ReadSlice('\n')
		if err != nil {
			return 0, false, err
		}
		line = bytes.TrimRight(line, "\r\n")
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, false, fmt.Errorf("%w: header line %q", errMalformed, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			length, err = strconv.ParseInt(string(value), 10, 64)
			if err != nil || length < 0 {
				return 0, false, fmt.Errorf("%w: Content-Length %q", errMalformed, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			if bytes.EqualFold(value, []byte("close")) {
				reuse = false
			}
		}
	}
	switch {
	case chunked:
		err = discardChunked(r)
	case length >= 0:
		_, err = r.Discard(int(length))
	case status == 204 || status == 304 || status < 200:
	default:
		// No length: the body runs to the end of the connection.
		_, err = io.Copy(io.Discard, r)
		reuse = false
	}
	return status, reuse, err
}

func discardChunked(r *bufio.Reader) error {
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(bytes.TrimRight(line, "\r\n"), []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errMalformed, line)
		}
		if n == 0 {
			// Trailers, then the blank line.
			for {
				line, err := r.ReadSlice('\n')
				if err != nil {
					return err
				}
				if len(bytes.TrimRight(line, "\r\n")) == 0 {
					return nil
				}
			}
		}
		if _, err := r.Discard(int(n) + 2); err != nil {
			return err
		}
	}
}

// Event is what one request carries: a binary-mode CloudEvent.
type Event struct {
	// Type is the ce-type; an empty Type is "loadgen".
	Type string
	// Extensions are extra ce- headers, by attribute name.
	Extensions map[string]string
}

// request renders a binary-mode POST of ev to u into buf. The event id is
// seq, and the loadsent extension is sent, in Unix nanoseconds.
func request(buf []byte, u *url.URL, ev Event, seq int64, sent time.Time, body []byte) []byte {
	typ := ev.Type
	if typ == "" {
		typ = "loadgen"
	}
	buf = append(buf[:0], "POST "...)
	buf = append(buf, u.RequestURI()...)
	buf = append(buf, " HTTP/1.1\r\nHost: "...)
	buf = append(buf, u.Host...)
	buf = append(buf, "\r\nContent-Type: application/json\r\nCe-Specversion: 1.0\r\nCe-Source: /loadgen\r\nCe-Type: "...)
	buf = append(buf, typ...)
	buf = append(buf, "\r\nCe-Id: "...)
	buf = strconv.AppendInt(buf, seq, 10)
	buf = append(buf, "\r\nCe-"+SentExtension+": "...)
	buf = strconv.AppendInt(buf, sent.UnixNano(), 10)
	for k, v := range ev.Extensions {
		buf = append(buf, "\r\nCe-"...)
		buf = append(buf, k...)
		buf = append(buf, ": "...)
		buf = append(buf, v...)
	}
	buf = append(buf, "\r\nContent-Length: "...)
	buf = strconv.AppendInt(buf, int64(len(body)), 10)
	buf = append(buf, "\r\n\r\n"...)
	return append(buf, body...)
}

// SentExtension is the CloudEvents extension that carries the time the load
// generator sent an event, in Unix nanoseconds.
const SentExtension = "loadsent"
