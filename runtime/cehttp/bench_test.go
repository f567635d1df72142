package cehttp

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/binding"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/knc-dev/knc/internal/routing"
)

// rewindBody is a request body that can be read again without allocating.
type rewindBody struct{ bytes.Reader }

func (*rewindBody) Close() error { return nil }

// benchRequest returns a request as net/http's server would hand it over,
// with a 1 KiB payload, and a function that makes it readable again.
func benchRequest(b *testing.B, structured bool) (*http.Request, func()) {
	b.Helper()
	payload := []byte(`{"order":"` + strings.Repeat("x", 1024-12) + `"}`)
	headers := validBinaryHeaders + "Ce-Time: 2024-05-06T07:08:09Z\r\nCe-Tenant: acme\r\nContent-Type: application/json\r\n"
	if structured {
		payload = []byte(`{"specversion":"1.0","id":"42","source":"/orders","type":"order.created","time":"2024-05-06T07:08:09Z","tenant":"acme","datacontenttype":"application/json","data":` + string(payload) + `}`)
		headers = "Content-Type: application/cloudevents+json\r\n"
	}
	r, err := parseRaw(rawRequest(headers, payload))
	if err != nil {
		b.Fatal(err)
	}
	body := &rewindBody{}
	r.Body = body
	return r, func() { body.Reset(payload) }
}

// BenchmarkReadRequest compares ReadRequest with the SDK's decoding of the
// same request (binding.ToEvent on an HTTP message, then Validate).
func BenchmarkReadRequest(b *testing.B) {
	for _, mode := range []string{"binary", "structured"} {
		b.Run(mode+"/knc", func(b *testing.B) {
			r, rewind := benchRequest(b, mode == "structured")
			b.ReportAllocs()
			for b.Loop() {
				rewind()
				if _, err := ReadRequest(r, 1<<20); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(mode+"/sdk", func(b *testing.B) {
			r, rewind := benchRequest(b, mode == "structured")
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				rewind()
				e, err := binding.ToEvent(ctx, sdkhttp.NewMessageFromHttpRequest(r))
				if err != nil {
					b.Fatal(err)
				}
				if err := e.Validate(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkNewRequest compares NewRequest with the SDK's writing of the
// same event into a request.
func BenchmarkNewRequest(b *testing.B) {
	r, rewind := benchRequest(b, false)
	rewind()
	e, err := ReadRequest(r, 0)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for _, format := range []string{routing.FormatBinary, routing.FormatJSON} {
		b.Run(format+"/knc", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := NewRequest(ctx, e, "http://127.0.0.1:8080/sink", format); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(format+"/sdk", func(b *testing.B) {
			wctx := binding.WithForceBinary(ctx)
			if format == routing.FormatJSON {
				wctx = binding.WithForceStructured(ctx)
			}
			b.ReportAllocs()
			for b.Loop() {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://127.0.0.1:8080/sink", nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := sdkhttp.WriteRequest(wctx, binding.ToMessage(e), req); err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Prefer", "reply")
			}
		})
	}
}

func BenchmarkNATS(b *testing.B) {
	r, rewind := benchRequest(b, false)
	rewind()
	e, err := ReadRequest(r, 0)
	if err != nil {
		b.Fatal(err)
	}
	m := ToNATS(e, "events.ns.default")
	b.Run("ToNATS", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			ToNATS(e, "events.ns.default")
		}
	})
	b.Run("FromNATS", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := FromNATS(m); err != nil {
				b.Fatal(err)
			}
		}
	})
}
