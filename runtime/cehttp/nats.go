package cehttp

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
)

// NATS header names. They are lower case: NATS headers are case sensitive.
const (
	natsPrefix      = "ce-"
	natsContentType = "content-type"
	// natsTypes lists the extensions whose value is not a string, as
	// "name=kind" pairs separated by commas.
	natsTypes = "knc-ce-types"
	// natsDataBase64 marks an event read from structured mode with
	// data_base64, so that it is written back the same way.
	natsDataBase64 = "knc-ce-database64"
)

// Kinds of non-string extension values in the knc-ce-types header.
const (
	kindBoolean   = "boolean"
	kindInteger   = "integer"
	kindBinary    = "binary"
	kindURI       = "uri"
	kindURIRef    = "uriref"
	kindTimestamp = "timestamp"
)

// ToNATS returns a message for subject that holds e in binary mode: the
// attributes in headers, the payload bytes unchanged as the body.
func ToNATS(e *event.Event, subject string) *nats.Msg {
	m := &nats.Msg{Subject: subject, Data: e.DataEncoded}
	if e.Context == nil {
		return m
	}
	n := natsHeaderCount(e)
	h := make(nats.Header, n)
	// One backing array for all the one-element value slices.
	values := make([]string, 0, n)
	natsHeaders(e, func(key, value string) {
		values = append(values, value)
		h[key] = values[len(values)-1 : len(values) : len(values)]
	})
	m.Header = h
	return m
}

// natsHeaderCount is the number of headers natsHeaders sets for e.
func natsHeaderCount(e *event.Event) int {
	if e.Context == nil {
		return 0
	}
	ec := asV1(e.Context)
	n := 4 + len(ec.Extensions)
	for _, present := range []bool{ec.DataContentType != nil, ec.Subject != nil, ec.Time != nil, ec.DataSchema != nil, e.DataBase64} {
		if present {
			n++
		}
	}
	for _, v := range ec.Extensions {
		if _, ok := v.(string); !ok {
			n++ // knc-ce-types
			break
		}
	}
	return n
}

// natsHeaders calls set with each NATS header of e, one value each.
func natsHeaders(e *event.Event, set func(key, value string)) {
	if e.Context == nil {
		return
	}
	ec := asV1(e.Context)
	// A 0.3 event is stored with the attributes of its 1.0 form (schemaurl
	// as dataschema, datacontentencoding as an extension) and its own
	// version, which FromNATS turns back into 0.3.
	version := event.CloudEventsVersionV1
	if _, ok := e.Context.(*event.EventContextV03); ok {
		version = event.CloudEventsVersionV03
	}
	set(natsPrefix+"specversion", version)
	set(natsPrefix+"id", natsEscape(ec.ID))
	set(natsPrefix+"source", natsEscape(ec.Source.String()))
	set(natsPrefix+"type", natsEscape(ec.Type))
	if ec.DataContentType != nil {
		set(natsContentType, natsEscape(*ec.DataContentType))
	}
	if ec.Subject != nil {
		set(natsPrefix+"subject", natsEscape(*ec.Subject))
	}
	if ec.Time != nil {
		// The offset is kept, unlike in HTTP, so the time reads back equal.
		set(natsPrefix+"time", ec.Time.Time.Format(time.RFC3339Nano))
	}
	if ec.DataSchema != nil {
		set(natsPrefix+"dataschema", natsEscape(ec.DataSchema.String()))
	}
	var kinds []string
	for name, v := range ec.Extensions {
		s, kind := formatExtension(v)
		set(natsExtensionKey(name), natsEscape(s))
		if kind != "" {
			kinds = append(kinds, name, kind)
		}
	}
	switch len(kinds) {
	case 0:
	case 2:
		// One typed extension, such as knativebrokerttl on every event
		// of a Broker: its pair is built once.
		set(natsTypes, typePair(kinds[0], kinds[1]))
	default:
		pairs := make([]string, 0, len(kinds)/2)
		for i := 0; i < len(kinds); i += 2 {
			pairs = append(pairs, kinds[i]+"="+kinds[i+1])
		}
		sort.Strings(pairs)
		set(natsTypes, strings.Join(pairs, ","))
	}
	if e.DataBase64 {
		set(natsDataBase64, "true")
	}
}

var extensionKeyCache boundedCache[string]

// typePairCaches hold "name=kind" strings, by kind then name.
var typePairCaches = map[string]*boundedCache[string]{
	kindBoolean: {}, kindInteger: {}, kindBinary: {}, kindURI: {}, kindURIRef: {}, kindTimestamp: {},
}

// typePair returns "name=kind", the knc-ce-types value of one extension.
func typePair(name, kind string) string {
	c := typePairCaches[kind]
	if c == nil {
		return name + "=" + kind
	}
	if p, ok := c.get(name); ok {
		return p
	}
	p := name + "=" + kind
	c.put(name, p)
	return p
}

// natsExtensionKey returns "ce-"+name; events carry few distinct
// extensions, so the keys are built once.
func natsExtensionKey(name string) string {
	if k, ok := extensionKeyCache.get(name); ok {
		return k
	}
	k := natsPrefix + name
	extensionKeyCache.put(name, k)
	return k
}

// formatExtension returns the text of an extension value and, when it is
// not a string, its kind.
func formatExtension(v any) (string, string) {
	switch v := v.(type) {
	case string:
		return v, ""
	case bool:
		return strconv.FormatBool(v), kindBoolean
	case int32:
		return strconv.FormatInt(int64(v), 10), kindInteger
	case []byte:
		return base64.StdEncoding.EncodeToString(v), kindBinary
	case types.URI:
		return v.String(), kindURI
	case types.URIRef:
		return v.String(), kindURIRef
	case types.Timestamp:
		return v.Time.Format(time.RFC3339Nano), kindTimestamp
	default:
		s, _ := types.Format(v)
		return s, ""
	}
}

// FromNATS reads the event that ToNATS stored in m.
func FromNATS(m *nats.Msg) (*event.Event, error) {
	h := m.Header
	version := ""
	if v := h[natsPrefix+"specversion"]; len(v) > 0 {
		version = v[0]
	}
	if version != event.CloudEventsVersionV1 && version != event.CloudEventsVersionV03 {
		return nil, attrError("specversion", "missing or unsupported in NATS message on "+m.Subject, nil)
	}
	types := ""
	if v := h[natsTypes]; len(v) > 0 {
		types = v[0]
	}
	b := new(binaryEvent)
	b.event.Context = &b.context
	for key, values := range h {
		if len(values) == 0 {
			continue
		}
		if err := b.setFromNATSHeader(key, values[0], types); err != nil {
			return nil, err
		}
	}
	if err := validateContext(&b.context); err != nil {
		return nil, err
	}
	if len(m.Data) > 0 {
		b.event.DataEncoded = m.Data
	}
	if v := h[natsDataBase64]; len(v) > 0 && v[0] == "true" {
		b.event.DataBase64 = true
	}
	return b.finish(version), nil
}

// finish returns the event read, in the spec version it was stored with.
func (b *binaryEvent) finish(version string) *event.Event {
	if version == event.CloudEventsVersionV03 {
		b.event.Context = b.context.AsV03()
	}
	return &b.event
}

// setFromNATSHeader sets what the NATS header key with value holds, if it
// holds an attribute; types is the knc-ce-types value.
func (b *binaryEvent) setFromNATSHeader(key, value, types string) error {
	if key == natsContentType {
		ct, err := natsUnescape(value)
		if err != nil {
			return attrError("datacontenttype", "bad escape", err)
		}
		b.contentType = ct
		b.context.DataContentType = &b.contentType
		return nil
	}
	name, ok := strings.CutPrefix(key, natsPrefix)
	if !ok {
		return nil
	}
	value, err := natsUnescape(value)
	if err != nil {
		return attrError(name, "bad escape", err)
	}
	return b.setFromNATS(name, value, kindOf(types, name))
}

func (b *binaryEvent) setFromNATS(name, value, kind string) error {
	ec := &b.context
	switch name {
	case "specversion":
	case "id":
		ec.ID = value
	case "source":
		u, err := parseURL(value)
		if err != nil {
			return attrError("source", "is not a URI-reference", err)
		}
		ec.Source = types.URIRef{URL: u}
	case "type":
		ec.Type = value
	case "subject":
		b.subject = value
		ec.Subject = &b.subject
	case "dataschema":
		u, err := url.Parse(value)
		if err != nil {
			return attrError("dataschema", "is not a URI", err)
		}
		ec.DataSchema = &types.URI{URL: *u}
	case "time":
		t, err := time.Parse(time.RFC3339Nano, value)
		if err != nil {
			return attrError("time", "is not an RFC 3339 timestamp", err)
		}
		b.time.Time = t
		ec.Time = &b.time
	default:
		v, err := parseExtension(value, kind)
		if err != nil {
			return attrError(name, "is not a valid "+kind, err)
		}
		if ec.Extensions == nil {
			ec.Extensions = make(map[string]any)
		}
		ec.Extensions[name] = v
	}
	return nil
}

func parseExtension(s, kind string) (any, error) {
	switch kind {
	case "":
		return s, nil
	case kindBoolean:
		return strconv.ParseBool(s)
	case kindInteger:
		i, err := strconv.ParseInt(s, 10, 32)
		return int32(i), err
	case kindBinary:
		return base64.StdEncoding.DecodeString(s)
	case kindURI:
		u, err := url.Parse(s)
		if err != nil {
			return nil, err
		}
		return types.URI{URL: *u}, nil
	case kindURIRef:
		u, err := url.Parse(s)
		if err != nil {
			return nil, err
		}
		return types.URIRef{URL: *u}, nil
	case kindTimestamp:
		t, err := time.Parse(time.RFC3339Nano, s)
		return types.Timestamp{Time: t}, err
	default:
		return nil, fmt.Errorf("unknown extension kind %q", kind)
	}
}

// natsEscape percent-encodes the bytes NATS would not carry unchanged in a
// header value: control characters (NATS turns CR and LF into spaces), '%'
// itself, and a space at either end (NATS trims white space).
func natsEscape(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if natsMustEscape(s, i) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if natsMustEscape(s, i) {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func natsMustEscape(s string, i int) bool {
	c := s[i]
	return c < ' ' || c == 0x7f || c == '%' || (c == ' ' && (i == 0 || i == len(s)-1))
}

// natsUnescape reverses natsEscape.
func natsUnescape(s string) (string, error) {
	if strings.IndexByte(s, '%') < 0 {
		return s, nil
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b = append(b, s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("truncated escape in %q", s)
		}
		hi, ok1 := unhex(s[i+1])
		lo, ok2 := unhex(s[i+2])
		if !ok1 || !ok2 {
			return "", fmt.Errorf("bad escape in %q", s)
		}
		b = append(b, hi<<4|lo)
		i += 2
	}
	return string(b), nil
}

func unhex(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	}
	return 0, false
}
