package engine

import (
	"context"
	"testing"
	"time"

	"github.com/knc-dev/knc/runtime/tracing"
	"github.com/knc-dev/knc/runtime/tracing/otlptest"
)

// TestTracingExportsOverOTLP runs the runtime with an OTLP exporter as
// knc run configures it, sending to a receiver over OTLP/HTTP and over
// OTLP/gRPC, and follows the parent chain in what the receiver got:
// client → ingress → route → attempt → the subscriber's traceparent.
func TestTracingExportsOverOTLP(t *testing.T) {
	// The batch exporter sends every 50ms rather than every 5s.
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "50")
	for _, c := range []struct {
		protocol string
		start    func(...otlptest.Option) (*otlptest.Receiver, error)
	}{
		{tracing.ProtocolHTTP, otlptest.NewHTTP},
		{tracing.ProtocolGRPC, otlptest.NewGRPC},
	} {
		t.Run(c.protocol, func(t *testing.T) {
			rcv, err := c.start()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(rcv.Close)
			tr, err := tracing.New(context.Background(), tracing.Config{Endpoint: rcv.URL, Protocol: c.protocol})
			if err != nil {
				t.Fatal(err)
			}
			if tr == nil {
				t.Fatal("tracing.New returned no tracer for a configured endpoint")
			}
			t.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
			sub := newRecorder(t)
			e := startEngine(t, Options{Table: brokerTable(trigger("t1", sub.srv.URL, nil)), Tracer: tr})
			postTraced(t, e.URL()+"/brokers/ns/b", "e1", clientTraceparent)

			eventually(t, 15*time.Second, "three spans at the receiver", func() bool { return rcv.Len() >= 3 })
			byName := map[string]otlptest.Span{}
			for _, s := range rcv.Spans() {
				byName[s.Name] = s
			}
			ingress, route, attempt := byName["ingress ns/b"], byName["route ns/b"], byName["deliver ns/t1"]
			for _, c := range []struct {
				name            string
				span            otlptest.Span
				parent, traceID string
			}{
				{"ingress", ingress, clientSpanID, clientTraceID},
				{"route", route, ingress.SpanID, clientTraceID},
				{"attempt", attempt, route.SpanID, clientTraceID},
			} {
				if c.span.SpanID == "" {
					t.Errorf("no %s span received; got %v", c.name, rcv.Spans())
					continue
				}
				if c.span.ParentSpanID != c.parent || c.span.TraceID != c.traceID {
					t.Errorf("%s span: parent %s in trace %s, want %s in %s", c.name, c.span.ParentSpanID, c.span.TraceID, c.parent, c.traceID)
				}
				if c.span.Service != tracing.DefaultServiceName {
					t.Errorf("%s span: service.name %q, want %q", c.name, c.span.Service, tracing.DefaultServiceName)
				}
			}
			got := traceparentOf(t, sub.headerOf(0))
			if got.SpanID().String() != attempt.SpanID || got.TraceID().String() != clientTraceID {
				t.Errorf("the subscriber got traceparent %s, want span %s of trace %s", sub.headerOf(0).Get("Traceparent"), attempt.SpanID, clientTraceID)
			}
			if a := attempt.Attributes; a["knc.trigger"] != "ns/t1" || a["cloudevents.event_id"] != "e1" || a["http.response.status_code"] != "202" || a["knc.delivery.attempt"] != "1" {
				t.Errorf("attempt span attributes = %v", a)
			}
			if code := ingress.Attributes["http.response.status_code"]; code != "202" {
				t.Errorf("ingress span: http.response.status_code = %q, want 202", code)
			}
		})
	}
}
