package cehttp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/knc-dev/knc/internal/routing"
)

// NewRequest builds the POST that delivers e to url: in binary mode by
// default, in structured mode (application/cloudevents+json) when format is
// routing.FormatJSON or when e's attributes cannot travel in headers
// unchanged. It sets "Prefer: reply". The payload bytes are never modified.
func NewRequest(ctx context.Context, e *event.Event, url string, format string) (*http.Request, error) {
	h, body, err := Encode(e, format)
	if err != nil {
		return nil, fmt.Errorf("building request for %s: %w", url, err)
	}
	req, err := NewPost(ctx, url, body)
	if err != nil {
		return nil, fmt.Errorf("building request for event %s: %w", e.ID(), err)
	}
	req.Header = h
	return req, nil
}

// Encode returns the headers and body of the POST that delivers e, as
// NewRequest builds it: what does not depend on where it goes.
func Encode(e *event.Event, format string) (http.Header, []byte, error) {
	if e.Context == nil {
		return nil, nil, errors.New("event has no context")
	}
	if _, ok := e.Context.(*event.EventContextV03); ok {
		return encodeV03(e, format)
	}
	ec := asV1(e.Context)
	if format != routing.FormatJSON {
		if h, ok := binaryHeaders(ec); ok {
			return h, e.DataEncoded, nil
		}
	}
	body, err := structuredBody(e)
	if err != nil {
		return nil, nil, fmt.Errorf("encoding event %s in structured mode: %w", ec.ID, err)
	}
	return http.Header{
		headerContentType: {MediaTypeStructured},
		"Prefer":          {"reply"},
	}, body, nil
}

// postTemplates hold a POST to each URL, parsed once: a runtime posts to a
// handful of subscribers, and parsing their URL for every request costs
// more than the rest of building it.
var postTemplates boundedCache[*http.Request]

// NewPost returns a POST of body to url, with ctx and no header. Requests
// to one URL share its parsed *url.URL, which nothing sending them
// modifies.
func NewPost(ctx context.Context, url string, body []byte) (*http.Request, error) {
	tmpl, ok := postTemplates.get(url)
	if !ok {
		var err error
		if tmpl, err = http.NewRequest(http.MethodPost, url, nil); err != nil {
			return nil, err
		}
		postTemplates.put(url, tmpl)
	}
	req := tmpl.WithContext(ctx)
	req.Header = nil
	req.ContentLength = int64(len(body))
	if len(body) == 0 {
		req.Body, req.GetBody = http.NoBody, nil
		return req, nil
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return req, nil
}

// binaryHeaders returns the binary-mode headers of ec, and false when some
// value would not arrive unchanged.
func binaryHeaders(ec *event.EventContextV1) (http.Header, bool) {
	n := 5 + len(ec.Extensions)
	for _, present := range []bool{ec.DataContentType != nil, ec.Subject != nil, ec.Time != nil, ec.DataSchema != nil} {
		if present {
			n++
		}
	}
	// One backing array for all the one-element value slices.
	values := make([]string, 0, n)
	h := make(http.Header, n)
	ok := true
	set := func(key, value string) {
		if !headerSafe(value) {
			ok = false
		}
		values = append(values, value)
		h[key] = values[len(values)-1 : len(values) : len(values)]
	}
	set("Prefer", "reply")
	set(headerSpecVersion, event.CloudEventsVersionV1)
	set("Ce-Id", ec.ID)
	set("Ce-Source", ec.Source.String())
	set("Ce-Type", ec.Type)
	if ec.DataContentType != nil {
		set(headerContentType, *ec.DataContentType)
	}
	if ec.Subject != nil {
		set("Ce-Subject", *ec.Subject)
	}
	if ec.Time != nil {
		set("Ce-Time", types.FormatTime(ec.Time.Time))
	}
	if ec.DataSchema != nil {
		set("Ce-Dataschema", ec.DataSchema.String())
	}
	for name, v := range ec.Extensions {
		s, err := types.Format(v)
		if err != nil || name == "" {
			return nil, false
		}
		set(extensionHeader(name), s)
	}
	return h, ok
}

// extensionHeader returns the canonical header name of an extension, whose
// name is lower-case ASCII letters and digits.
func extensionHeader(name string) string {
	if k, ok := extensionHeaderCache.get(name); ok {
		return k
	}
	k := canonicalExtensionHeader(name)
	extensionHeaderCache.put(name, k)
	return k
}

var extensionHeaderCache boundedCache[string]

func canonicalExtensionHeader(name string) string {
	var b strings.Builder
	b.Grow(len(headerPrefix) + len(name))
	b.WriteString(headerPrefix)
	c := name[0]
	if 'a' <= c && c <= 'z' {
		c -= 'a' - 'A'
	}
	b.WriteByte(c)
	b.WriteString(name[1:])
	return b.String()
}

// headerSafe tells whether a receiver reads value back unchanged from an
// HTTP header: no control characters, and no white space at either end,
// which HTTP strips.
func headerSafe(value string) bool {
	for i := 0; i < len(value); i++ {
		if c := value[i]; c < ' ' || c == 0x7f {
			return false
		}
	}
	return value == "" || (value[0] != ' ' && value[len(value)-1] != ' ')
}

// structuredBody encodes e in the JSON event format, choosing data_base64
// whenever "data" could not give the payload back byte for byte.
func structuredBody(e *event.Event) ([]byte, error) {
	c := *e
	if c.DataEncoded != nil && !c.DataBase64 && !dataFitsJSON(&c) {
		c.DataBase64 = true
	}
	// MarshalJSON is called directly: encoding/json would compact the
	// payload of a JSON event.
	return c.MarshalJSON()
}

// dataFitsJSON tells whether the SDK's "data" member carries e's payload
// unchanged: JSON payloads are written raw, so they must be exactly one
// JSON value; other payloads are written as a JSON string, so they must be
// UTF-8.
func dataFitsJSON(e *event.Event) bool {
	mt := ""
	if ct := e.DataContentType(); ct != "" {
		mt = mediaType(ct)
	}
	switch mt {
	case "", event.ApplicationJSON, event.TextJSON, MediaTypeStructured, MediaTypeBatch:
		d := e.DataEncoded
		return len(d) > 0 && !isJSONSpace(d[0]) && !isJSONSpace(d[len(d)-1]) && json.Valid(d)
	default:
		return utf8.Valid(e.DataEncoded)
	}
}

func isJSONSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// asV1 returns c as a 1.0 context, without the copy AsV1 makes of one that
// already is.
func asV1(c event.EventContext) *event.EventContextV1 {
	if ec, ok := c.(*event.EventContextV1); ok {
		return ec
	}
	return c.AsV1()
}
