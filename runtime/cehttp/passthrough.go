package cehttp

import (
	"net/http"
	"net/url"
	"strings"
)

// Headers a Broker or Channel passes from an incoming request to the
// deliveries of its event, and from a subscriber's reply to where the
// reply goes. The rules are those of Knative's dispatcher
// (knative/eventing pkg/utils/headers.go, applied by its Broker ingress,
// Broker filter and Channel receiver): X-Request-Id, Retry-After, and every
// header starting with Knative- or X-B3-. knc adds the W3C trace context
// (traceparent, tracestate), which Knative carries through its
// OpenTelemetry propagator: with no span of its own, knc forwards the
// sender's context as it came. CloudEvents ce- headers never pass this way:
// they are the event's attributes.
var (
	passThroughNames    = []string{"x-request-id", "retry-after", "traceparent", "tracestate"}
	passThroughPrefixes = []string{"knative-", "x-b3-"}
)

// HeaderNamespace is the header every delivery carries with the namespace
// of its Trigger or Subscription, as Knative's dispatcher sends it.
const HeaderNamespace = "Kn-Namespace"

// NATSPassThrough is the NATS header that stores an event's pass-through
// headers next to it, encoded by EncodeHeader.
const NATSPassThrough = "knc-headers"

// PassThrough returns the headers of h that pass through, or nil when
// none does. Kn-Namespace never passes: each delivery sets its own.
func PassThrough(h http.Header) http.Header {
	var out http.Header
	for name, values := range h {
		if !passesThrough(name) {
			continue
		}
		if out == nil {
			out = http.Header{}
		}
		out[name] = values
	}
	return out
}

// passesThrough compares without folding name to lower case, which would
// allocate for every header of every request.
func passesThrough(name string) bool {
	for _, n := range passThroughNames {
		if strings.EqualFold(name, n) {
			return true
		}
	}
	for _, p := range passThroughPrefixes {
		if len(name) >= len(p) && strings.EqualFold(name[:len(p)], p) {
			return true
		}
	}
	return false
}

// EncodeHeader encodes h as one header value, "" when h is empty: names and
// values escaped as in a URL query, sorted by name.
func EncodeHeader(h http.Header) string {
	if len(h) == 0 {
		return ""
	}
	return url.Values(h).Encode()
}

// DecodeHeader reads what EncodeHeader wrote; what it cannot read is
// ignored, as a lost pass-through header is no reason to lose an event.
func DecodeHeader(s string) http.Header {
	if s == "" {
		return nil
	}
	v, _ := url.ParseQuery(s)
	h := make(http.Header, len(v))
	for name, values := range v {
		h[http.CanonicalHeaderKey(name)] = values
	}
	return h
}
