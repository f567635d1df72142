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
	ec := e.Context.AsV1()
	h := make(nats.Header, 6+len(ec.Extensions))
	h[natsPrefix+"specversion"] = []string{event.CloudEventsVersionV1}
	h[natsPrefix+"id"] = []string{natsEscape(ec.ID)}
	h[natsPrefix+"source"] = []string{natsEscape(ec.Source.String())}
	h[natsPrefix+"type"] = []string{natsEscape(ec.Type)}
	if ec.DataContentType != nil {
		h[natsContentType] = []string{natsEscape(*ec.DataContentType)}
	}
	if ec.Subject != nil {
		h[natsPrefix+"subject"] = []string{natsEscape(*ec.Subject)}
	}
	if ec.Time != nil {
		// The offset is kept, unlike in HTTP, so the time reads back equal.
		h[natsPrefix+"time"] = []string{ec.Time.Time.Format(time.RFC3339Nano)}
	}
	if ec.DataSchema != nil {
		h[natsPrefix+"dataschema"] = []string{natsEscape(ec.DataSchema.String())}
	}
	var kinds []string
	for name, v := range ec.Extensions {
		s, kind := formatExtension(v)
		h[natsPrefix+name] = []string{natsEscape(s)}
		if kind != "" {
			kinds = append(kinds, name+"="+kind)
		}
	}
	if len(kinds) > 0 {
		sort.Strings(kinds)
		h[natsTypes] = []string{strings.Join(kinds, ",")}
	}
	if e.DataBase64 {
		h[natsDataBase64] = []string{"true"}
	}
	m.Header = h
	return m
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
	if v := h[natsPrefix+"specversion"]; len(v) == 0 || v[0] != event.CloudEventsVersionV1 {
		return nil, attrError("specversion", "missing or unsupported in NATS message on "+m.Subject, nil)
	}
	var kinds map[string]string
	if v := h[natsTypes]; len(v) > 0 {
		kinds = make(map[string]string)
		for pair := range strings.SplitSeq(v[0], ",") {
			name, kind, _ := strings.Cut(pair, "=")
			kinds[name] = kind
		}
	}
	ec := &event.EventContextV1{}
	for key, values := range h {
		if len(values) == 0 {
			continue
		}
		if key == natsContentType {
			ct, err := natsUnescape(values[0])
			if err != nil {
				return nil, attrError("datacontenttype", "bad escape", err)
			}
			ec.DataContentType = &ct
			continue
		}
		name, ok := strings.CutPrefix(key, natsPrefix)
		if !ok {
			continue
		}
		value, err := natsUnescape(values[0])
		if err != nil {
			return nil, attrError(name, "bad escape", err)
		}
		if err := setNATSAttribute(ec, name, value, kinds[name]); err != nil {
			return nil, err
		}
	}
	if err := validateContext(ec); err != nil {
		return nil, err
	}
	e := &event.Event{Context: ec}
	if len(m.Data) > 0 {
		e.DataEncoded = m.Data
	}
	if v := h[natsDataBase64]; len(v) > 0 && v[0] == "true" {
		e.DataBase64 = true
	}
	return e, nil
}

func setNATSAttribute(ec *event.EventContextV1, name, value, kind string) error {
	switch name {
	case "specversion":
	case "id":
		ec.ID = value
	case "source":
		u, err := url.Parse(value)
		if err != nil {
			return attrError("source", "is not a URI-reference", err)
		}
		ec.Source = types.URIRef{URL: *u}
	case "type":
		ec.Type = value
	case "subject":
		ec.Subject = &value
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
		ec.Time = &types.Timestamp{Time: t}
	default:
		v, err := parseExtension(value, kind)
		if err != nil {
			return attrError(name, "is not a valid "+kind, err)
		}
		if ec.Extensions == nil {
			ec.Extensions = make(map[string]any, 4)
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
