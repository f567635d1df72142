package engine

import (
	"context"
	"net/http"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/trace"

	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/tracing"
)

// Spans. Each stage parents its span by the trace context stored with
// the event, in the traceparent of its pass-through headers (knc-headers):
// the ingress stores its span's, the route stage stores its own with the
// deliveries it stores, and an attempt that sends the event to the dead
// stage stores its own. Routing after a restart and retries in the
// dispatch stage are so still children of the span before them. Nothing
// here runs when processor.tracer is nil.

func (s *source) traceObject() tracing.Object {
	return tracing.Object{Kind: s.kind.String(), Key: s.obj.Key()}
}

func (t *target) traceObject() tracing.Object {
	return tracing.Object{Kind: t.kind, Key: t.obj.Key()}
}

// startRoute starts the span of routing ev, and returns its context and
// the pass-through headers the deliveries routing stores carry.
func (p *processor) startRoute(src *source, ev *event.Event, passThrough string) (context.Context, trace.Span, string) {
	ctx, span := p.tracer.StartRoute(cehttp.DecodeHeader(passThrough), ev, src.traceObject())
	return ctx, span, tracedPassThrough(ctx, passThrough)
}

// tracedPassThrough returns passThrough, an encoded knc-headers value,
// with the trace context of ctx.
func tracedPassThrough(ctx context.Context, passThrough string) string {
	h := cehttp.DecodeHeader(passThrough)
	if h == nil {
		h = http.Header{}
	}
	tracing.Inject(ctx, h)
	return cehttp.EncodeHeader(h)
}

// traceParent is the context the attempt's span is a child of: the route
// span's for a first attempt, else the one stored with the delivery.
func (a *attempt) traceParent() context.Context {
	if a.parent == nil {
		a.parent = tracing.Parent(context.Background(), cehttp.DecodeHeader(a.passThrough), a.ev)
	}
	return a.parent
}

// startAttempt starts the span of an attempt to url and returns the
// headers of its request, which carry the span's context.
func (a *attempt) startAttempt(url string, deadLetter bool, header http.Header) (context.Context, trace.Span, http.Header) {
	ctx, span := a.p.tracer.StartAttempt(a.traceParent(), a.ev, tracing.Attempt{
		Source: a.src.traceObject(), Target: a.t.traceObject(),
		N: a.n, DeadLetter: deadLetter, URL: redact.URI(url),
	})
	return ctx, span, tracedHeader(ctx, header)
}

// tracedHeader returns a copy of h that carries the trace context of ctx.
func tracedHeader(ctx context.Context, h http.Header) http.Header {
	c := h.Clone()
	if c == nil {
		c = http.Header{}
	}
	tracing.Inject(ctx, c)
	return c
}

// endAttempt ends the span of an attempt or a reply with its result.
func endAttempt(span trace.Span, r delivery.Result) {
	var reason string
	if r.Err != nil {
		reason = redact.Text(r.Err.Error())
	}
	tracing.EndAttempt(span, r.StatusCode, r.Success, reason)
}
