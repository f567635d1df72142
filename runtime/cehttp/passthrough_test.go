package cehttp

import (
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestPassThrough checks the header rules of Knative's dispatcher
// (knative/eventing pkg/utils/headers.go) plus the W3C trace context, and
// that the encoding of the stored headers reads back equal.
func TestPassThrough(t *testing.T) {
	in := http.Header{
		"Knative-Hello":  {"world"},
		"X-B3-Traceid":   {"abc"},
		"X-Request-Id":   {"r1"},
		"Retry-After":    {"3"},
		"Traceparent":    {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Tracestate":     {"vendor=x"},
		"Ce-Id":          {"1"},
		"Kn-Namespace":   {"other"},
		"Authorization":  {"Bearer x"},
		"Content-Type":   {"application/json"},
		"X-Custom":       {"no"},
		"Knative-Multi":  {"a", "b & c=d"},
		"Knative-Empty":  {""},
		"X-B3-Sampled":   {"1"},
		"Prefer":         {"reply"},
		"Knativeish-Not": {"no"},
	}
	want := http.Header{
		"Knative-Hello": {"world"},
		"X-B3-Traceid":  {"abc"},
		"X-Request-Id":  {"r1"},
		"Retry-After":   {"3"},
		"Traceparent":   {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},
		"Tracestate":    {"vendor=x"},
		"Knative-Multi": {"a", "b & c=d"},
		"Knative-Empty": {""},
		"X-B3-Sampled":  {"1"},
	}
	got := PassThrough(in)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("PassThrough (-want +got):\n%s", d)
	}
	if d := cmp.Diff(want, DecodeHeader(EncodeHeader(got))); d != "" {
		t.Errorf("DecodeHeader(EncodeHeader) (-want +got):\n%s", d)
	}
	if PassThrough(http.Header{"Ce-Id": {"1"}}) != nil || EncodeHeader(nil) != "" || DecodeHeader("") != nil {
		t.Error("nothing to pass through must give nil and \"\"")
	}
}
