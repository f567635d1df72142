package cehttp

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// Media types of the structured and batched content modes.
const (
	MediaTypeStructured = "application/cloudevents+json"
	MediaTypeBatch      = "application/cloudevents-batch+json"
)

// Canonical HTTP header names of the CloudEvents attributes in binary mode.
const (
	headerSpecVersion = "Ce-Specversion"
	headerContentType = "Content-Type"
	headerPrefix      = "Ce-"
)

type contentMode int

const (
	modeNone contentMode = iota
	modeBinary
	modeStructured
	modeBatch
)

// modeOf tells the content mode of a message from its headers, the way the
// SDK does: a structured media type wins over ce- headers.
func modeOf(h http.Header) contentMode {
	if ct := h[headerContentType]; len(ct) > 0 {
		switch mediaType(ct[0]) {
		case MediaTypeStructured:
			return modeStructured
		case MediaTypeBatch:
			return modeBatch
		}
	}
	if _, ok := h[headerSpecVersion]; ok {
		return modeBinary
	}
	return modeNone
}

// mediaType returns the lower-cased media type of a Content-Type value,
// without its parameters. It allocates only when the value is not already
// lower case.
func mediaType(contentType string) string {
	if i := strings.IndexByte(contentType, ';'); i >= 0 {
		contentType = contentType[:i]
	}
	return strings.TrimSpace(strings.ToLower(contentType))
}

// ReadRequest parses a CloudEvents 1.0 or 0.3 HTTP request in binary mode (ce-*
// headers) or structured mode (Content-Type: application/cloudevents+json).
// It reads at most maxBody bytes of body (0 = no limit).
//
// errors.Is(err, ErrTooLarge) means the body is over the limit (answer 413);
// a *ParseError means the request is not a valid CloudEvent (answer 400). Any
// other error comes from reading the body. The payload bytes are kept exactly
// as received.
func ReadRequest(r *http.Request, maxBody int64) (*event.Event, error) {
	return read(r.Header, r.Body, r.ContentLength, maxBody, false)
}

// ReadReply returns the CloudEvent in a delivery response, or nil when there
// is none: only a 200 response carries a reply (a 202 body never does), and
// a body without ce- headers or a structured content type is no CloudEvent.
// A response that claims to be a CloudEvent but is not a valid one is an
// error, as for ReadRequest. ReadReply does not close the body.
func ReadReply(resp *http.Response, maxBody int64) (*event.Event, error) {
	if resp.StatusCode != http.StatusOK {
		return nil, nil
	}
	return read(resp.Header, resp.Body, resp.ContentLength, maxBody, true)
}

func read(h http.Header, body io.Reader, contentLength, maxBody int64, optional bool) (*event.Event, error) {
	if maxBody > 0 && contentLength > maxBody {
		return nil, ErrTooLarge
	}
	switch modeOf(h) {
	case modeBinary:
		if err := checkUTF8(h); err != nil {
			return nil, err
		}
		if isV03(h) {
			data, err := readBody(body, contentLength, maxBody)
			if err != nil {
				return nil, err
			}
			return readV03Binary(h, data)
		}
		e, err := parseBinaryHeaders(h)
		if err != nil {
			return nil, err
		}
		data, err := readBody(body, contentLength, maxBody)
		if err != nil {
			return nil, err
		}
		if len(data) > 0 {
			e.DataEncoded = data
		}
		return e, nil
	case modeStructured:
		data, err := readBody(body, contentLength, maxBody)
		if err != nil {
			return nil, err
		}
		return parseStructured(data)
	case modeBatch:
		return nil, &ParseError{Reason: "batched content mode (" + MediaTypeBatch + ") is not supported; send one event per request"}
	default:
		if optional {
			return nil, nil
		}
		return nil, attrError("specversion", "missing: a CloudEvent needs a ce-specversion header (binary mode) or Content-Type "+MediaTypeStructured+" (structured mode)", nil)
	}
}

// maxPreallocBytes bounds the buffer allocated up front from a declared
// Content-Length: beyond it, the buffer grows with what actually arrives, so
// that a header alone cannot make the process allocate gigabytes.
const maxPreallocBytes = 4 << 20

// readBody reads a whole body, allocating once when its length is known.
func readBody(body io.Reader, contentLength, maxBody int64) ([]byte, error) {
	if body == nil || body == http.NoBody {
		return nil, nil
	}
	var data []byte
	var err error
	if contentLength > 0 && contentLength <= maxPreallocBytes {
		data = make([]byte, contentLength)
		_, err = io.ReadFull(body, data)
	} else {
		limited := body
		if maxBody > 0 {
			limited = io.LimitReader(body, maxBody+1)
		}
		data, err = io.ReadAll(limited)
		if err == nil && maxBody > 0 && int64(len(data)) > maxBody {
			return nil, ErrTooLarge
		}
	}
	if err != nil {
		if _, ok := errors.AsType[*http.MaxBytesError](err); ok {
			return nil, fmt.Errorf("%w: %w", ErrTooLarge, err)
		}
		return nil, fmt.Errorf("reading cloudevent body: %w", err)
	}
	return data, nil
}

// checkUTF8 refuses a binary-mode message with a ce- header, or a
// Content-Type, that is not valid UTF-8. CloudEvents attributes are
// Unicode strings; net/http takes any byte above 0x7f in a header value,
// and the SDK passes such bytes on as they came, so an event that no
// subscriber can decode would otherwise be stored and forwarded raw.
func checkUTF8(h http.Header) error {
	for key, values := range h {
		if key != headerContentType && (len(key) < len(headerPrefix) || key[:len(headerPrefix)] != headerPrefix) {
			continue
		}
		for _, v := range values {
			if !utf8.ValidString(v) {
				attr := strings.ToLower(strings.TrimPrefix(key, headerPrefix))
				if key == headerContentType {
					attr = "datacontenttype"
				}
				return attrError(attr, fmt.Sprintf("the %s header is not valid UTF-8", key), nil)
			}
		}
	}
	return nil
}

// parseBinaryHeaders reads the attributes of a binary-mode message. It
// follows the SDK's rules to the letter, so that both accept the same
// messages: the first value of each header counts; id, type, subject,
// dataschema and datacontenttype are trimmed of white space; a blank
// optional attribute is absent; the zero time is no time.
func parseBinaryHeaders(h http.Header) (*event.Event, error) {
	if v := h[headerSpecVersion]; len(v) == 0 || v[0] != event.CloudEventsVersionV1 {
		got := ""
		if len(v) > 0 {
			got = v[0]
		}
		return nil, attrError("specversion", fmt.Sprintf("%q is not supported, only %q and %q are", got, event.CloudEventsVersionV1, event.CloudEventsVersionV03), nil)
	}
	// One allocation holds the event, its context and the values its
	// optional attributes point to.
	b := new(binaryEvent)
	b.event.Context = &b.context
	for key, values := range h {
		if len(values) == 0 {
			continue
		}
		value := values[0]
		if key == headerContentType {
			if b.contentType = strings.TrimSpace(value); b.contentType != "" {
				b.context.DataContentType = &b.contentType
			}
			continue
		}
		if len(key) < len(headerPrefix) || key[:len(headerPrefix)] != headerPrefix {
			continue
		}
		if err := b.set(key[len(headerPrefix):], value); err != nil {
			return nil, err
		}
	}
	if err := validateContext(&b.context); err != nil {
		return nil, err
	}
	return &b.event, nil
}

type binaryEvent struct {
	event                event.Event
	context              event.EventContextV1
	contentType, subject string
	time                 types.Timestamp
}

// set sets one attribute from a ce- header; name is the canonical header
// name without its "Ce-" prefix.
func (b *binaryEvent) set(name, value string) error {
	ec := &b.context
	switch name {
	case "Specversion":
		// Checked by the caller.
	case "Id":
		id := strings.TrimSpace(value)
		if id == "" {
			return attrError("id", "must not be empty", nil)
		}
		ec.ID = id
	case "Source":
		u, err := parseURL(value)
		if err != nil {
			return attrError("source", "is not a URI-reference", err)
		}
		ec.Source = types.URIRef{URL: u}
	case "Type":
		ec.Type = strings.TrimSpace(value)
	case "Subject":
		if b.subject = strings.TrimSpace(value); b.subject != "" {
			ec.Subject = &b.subject
		}
	case "Dataschema":
		if s := strings.TrimSpace(value); s != "" {
			u, err := url.Parse(s)
			if err != nil {
				return attrError("dataschema", "is not a URI", err)
			}
			ec.DataSchema = &types.URI{URL: *u}
		}
	case "Time":
		t, err := time.Parse(time.RFC3339Nano, value)
		if err != nil {
			return attrError("time", "is not an RFC 3339 timestamp", err)
		}
		if !t.IsZero() {
			b.time.Time = t
			ec.Time = &b.time
		}
	default:
		ext, err := extensionName(name)
		if err != nil {
			return err
		}
		if ec.Extensions == nil {
			ec.Extensions = make(map[string]any)
		}
		ec.Extensions[ext] = value
	}
	return nil
}

// lowerNameCache maps the canonical header spelling of extension names
// ("Knativebrokerttl") to the names: a stream of events carries few.
var lowerNameCache boundedCache[string]

// specAttributes are the names an extension must not take.
var specAttributes = []string{"id", "source", "type", "datacontenttype", "subject", "time", "specversion", "dataschema"}

// extensionName checks an extension name and returns it in lower case.
// CloudEvents names are lower-case ASCII letters and digits; like the SDK,
// knc accepts upper case and folds it, since HTTP header names are case
// insensitive.
func extensionName(name string) (string, error) {
	if name == "" {
		return "", attrError("", "a ce- header must name an attribute", nil)
	}
	lower := true
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			lower = false
		default:
			return "", attrError(name, "attribute names are ASCII letters and digits only", nil)
		}
	}
	if !lower {
		if l, ok := lowerNameCache.get(name); ok {
			name = l
		} else {
			l = strings.ToLower(name)
			lowerNameCache.put(name, l)
			name = l
		}
	}
	if slices.Contains(specAttributes, name) {
		return "", attrError(name, "a context attribute cannot be set as an extension", nil)
	}
	return name, nil
}

// validateContext applies the checks of the SDK's EventContextV1.Validate,
// reporting the first failure as a *ParseError.
func validateContext(ec *event.EventContextV1) error {
	if strings.TrimSpace(ec.ID) == "" {
		return attrError("id", "is required", nil)
	}
	if !hasText(&ec.Source.URL) {
		return attrError("source", "is required", nil)
	}
	if strings.TrimSpace(ec.Type) == "" {
		return attrError("type", "is required", nil)
	}
	if ec.DataContentType != nil {
		ct := strings.TrimSpace(*ec.DataContentType)
		if ct == "" {
			return attrError("datacontenttype", "must not be empty", nil)
		}
		if err := checkMediaType(ct); err != nil {
			return attrError("datacontenttype", "is not a media type", err)
		}
	}
	if ec.DataSchema != nil && !ec.DataSchema.IsAbs() {
		return attrError("dataschema", "must be an absolute URI", nil)
	}
	if ec.Subject != nil && strings.TrimSpace(*ec.Subject) == "" {
		return attrError("subject", "must not be empty", nil)
	}
	return nil
}

// parseStructured decodes a structured-mode body with the SDK's JSON event
// format, which is what Knative does, and checks the result.
func parseStructured(data []byte) (*event.Event, error) {
	e, err := unmarshalStructured(data)
	if err != nil {
		return nil, &ParseError{Reason: "malformed structured event", Err: err}
	}
	if _, ok := e.Context.(*event.EventContextV03); ok {
		return validateV03(e)
	}
	ec, ok := e.Context.(*event.EventContextV1)
	if !ok {
		return nil, attrError("specversion", fmt.Sprintf("%q is not supported, only %q and %q are", e.SpecVersion(), event.CloudEventsVersionV1, event.CloudEventsVersionV03), nil)
	}
	if err := validateContext(ec); err != nil {
		return nil, err
	}
	return e, nil
}

// unmarshalStructured runs the SDK's JSON event decoder, which panics on
// some malformed input (a data_base64 that is not a string): a sender must
// not be able to crash the ingress.
func unmarshalStructured(data []byte) (e *event.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, err = nil, fmt.Errorf("undecodable event: %v", p)
		}
	}()
	e = new(event.Event)
	// json.Unmarshal checks the syntax of the whole document before handing
	// it to the SDK's streaming decoder, which would accept trailing garbage.
	if err := json.Unmarshal(data, e); err != nil {
		return nil, err
	}
	return e, nil
}

// hasText tells whether u's text has anything but white space, without
// building it when it surely has.
func hasText(u *url.URL) bool {
	if u.Scheme != "" || u.Host != "" || u.Opaque != "" || u.Path != "" {
		return true
	}
	return strings.TrimSpace(u.String()) != ""
}
