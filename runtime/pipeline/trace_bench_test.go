package pipeline

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/tracing"
)

// clientTraceparent is a client's trace context, as a traced sender would
// put it on a request.
const clientTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

// discardSpans is an exporter that drops what it is given: the cost of
// making spans, without the cost of sending them.
type discardSpans struct{}

func (discardSpans) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error { return nil }
func (discardSpans) Shutdown(context.Context) error                             { return nil }

// BenchmarkSpansOfAnEvent measures what tracing adds to one event
// delivered at its first attempt: the ingress, route and attempt spans,
// and the trace context written into the stored headers and the delivery
// request, as the stages make them; spans are batched and dropped, not
// sent.
func BenchmarkSpansOfAnEvent(b *testing.B) {
	tr := tracing.NewProvider(sdktrace.NewTracerProvider(sdktrace.WithBatcher(discardSpans{})))
	b.Cleanup(func() { _ = tr.Shutdown(context.Background()) })
	ev := event.New()
	ev.SetID("e1")
	ev.SetSource("/bench")
	ev.SetType("bench")
	reqHeader := http.Header{"Traceparent": {clientTraceparent}, "Content-Type": {"application/json"}}
	p := &Processor{tracer: tr}
	t := &Target{kind: "Trigger", obj: routing.Source{Namespace: "ns", Name: "t"}, deliverURL: "http://subscriber.ns.svc.cluster.local/", header: namespaceHeader("ns")}
	src := &Source{kind: KindBroker, obj: routing.Source{Namespace: "ns", Name: "b"}, targets: []*Target{t}}
	src.setTracing()
	b.ReportAllocs()
	for b.Loop() {
		_, span := tr.StartIngress(reqHeader, &ev, src.trace, time.Now())
		pass := cehttp.PassThrough(reqHeader)
		tracing.Inject(context.Background(), pass)
		stored := cehttp.EncodeHeader(pass)
		span.EndIngress(http.StatusAccepted, nil)

		routeCtx, routeSpan := p.startRoute(src, &ev, stored)
		a := &attempt{p: p, src: src, t: t, ev: &ev, n: 1, passThrough: stored, parent: routeCtx}
		_, aspan, _ := a.startAttempt(false, a.header())
		endAttempt(aspan, delivery.Result{Success: true, StatusCode: http.StatusAccepted})
		routeSpan.EndRoute(1)
	}
}
