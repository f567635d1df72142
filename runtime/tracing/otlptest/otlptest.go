// Package otlptest is an OTLP trace receiver for tests and benchmarks:
// it takes the spans an exporter sends over OTLP/HTTP (protobuf) or
// OTLP/gRPC on a loopback port, and keeps them to be looked at.
package otlptest

import (
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"

	collectortrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, its IDs in hex.
type Span struct {
	Name                          string
	TraceID, SpanID, ParentSpanID string
	// Kind is OTLP's span kind: 2 server, 3 client, 4 producer, 5
	// consumer.
	Kind int32
	// Error is whether its status is an error.
	Error bool
	// Attributes are the span's, as strings; Service is the resource's
	// service.name.
	Attributes map[string]string
	Service    string
}

// Receiver keeps the spans sent to it. Count them with Len, read them
// with Spans.
type Receiver struct {
	mu    sync.Mutex
	spans []Span
	// keep is false for a receiver that only counts, as in benchmarks.
	keep bool

	close func()
	// URL is where exporters send to: http://127.0.0.1:PORT.
	URL string
}

// Option configures a Receiver.
type Option func(*Receiver)

// CountOnly keeps no span, only their number, for a receiver under load.
func CountOnly() Option { return func(r *Receiver) { r.keep = false } }

// NewHTTP starts a receiver of OTLP/HTTP with protobuf bodies, at
// URL/v1/traces. Close stops it.
func NewHTTP(opts ...Option) (*Receiver, error) {
	r := &Receiver{keep: true}
	for _, o := range opts {
		o(r)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/traces", func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		var msg collectortrace.ExportTraceServiceRequest
		if err == nil {
			err = proto.Unmarshal(body, &msg)
		}
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.add(&msg)
		out, _ := proto.Marshal(&collectortrace.ExportTraceServiceResponse{})
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(out)
	})
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	r.URL = "http://" + ln.Addr().String()
	r.close = func() { _ = srv.Close() }
	return r, nil
}

// NewGRPC starts a receiver of OTLP/gRPC, without TLS. Close stops it.
func NewGRPC(opts ...Option) (*Receiver, error) {
	r := &Receiver{keep: true}
	for _, o := range opts {
		o(r)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer()
	collectortrace.RegisterTraceServiceServer(srv, traceService{r: r})
	go func() { _ = srv.Serve(ln) }()
	r.URL = "http://" + ln.Addr().String()
	r.close = srv.Stop
	return r, nil
}

type traceService struct {
	collectortrace.UnimplementedTraceServiceServer
	r *Receiver
}

func (s traceService) Export(_ context.Context, req *collectortrace.ExportTraceServiceRequest) (*collectortrace.ExportTraceServiceResponse, error) {
	s.r.add(req)
	return &collectortrace.ExportTraceServiceResponse{}, nil
}

// Close stops the receiver.
func (r *Receiver) Close() { r.close() }

func (r *Receiver) add(req *collectortrace.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = value(kv.GetValue())
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if !r.keep {
					r.spans = append(r.spans, Span{})
					continue
				}
				attrs := make(map[string]string, len(s.GetAttributes()))
				for _, kv := range s.GetAttributes() {
					attrs[kv.GetKey()] = value(kv.GetValue())
				}
				r.spans = append(r.spans, Span{
					Name:         s.GetName(),
					TraceID:      hex.EncodeToString(s.GetTraceId()),
					SpanID:       hex.EncodeToString(s.GetSpanId()),
					ParentSpanID: hex.EncodeToString(s.GetParentSpanId()),
					Kind:         int32(s.GetKind()),
					Error:        s.GetStatus().GetCode() == 2,
					Attributes:   attrs,
					Service:      service,
				})
			}
		}
	}
}

func value(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		if x.BoolValue {
			return "true"
		}
		return "false"
	}
	return ""
}

// Len is how many spans were received.
func (r *Receiver) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.spans)
}

// Spans returns the spans received, in the order they came.
func (r *Receiver) Spans() []Span {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...)
}
