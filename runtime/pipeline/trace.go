package pipeline

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/internal/knative"
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
// here runs when Processor.tracer is nil.

// setTracing names s and its targets for their spans, with the URLs of
// the targets' destinations masked as in logs.
func (s *Source) setTracing() {
	s.trace = tracing.NewSource(s.kind == KindBroker, s.obj.Key())
	for _, t := range s.targets {
		t.trace = tracing.NewTarget(t.kind == knative.KindTrigger, t.obj.Key(), maskURL(t.deliverURL), maskURL(t.replyURL), maskURL(t.deadLetterURL))
	}
}

func maskURL(u string) string {
	if u == "" {
		return ""
	}
	return redact.URI(u)
}

// startRoute starts the span of routing ev, a child of the span whose
// context is stored in passThrough.
func (p *Processor) startRoute(src *Source, ev *event.Event, passThrough string) (context.Context, tracing.Span) {
	return p.tracer.StartRoute(storedParent(passThrough, ev), ev, src.trace)
}

// storedParent returns a context holding the span context stored in
// passThrough, an encoded knc-headers value, or else in ev's
// distributed-tracing extension. It reads the two values it needs rather
// than decoding every header.
func storedParent(passThrough string, ev *event.Event) context.Context {
	var traceparent, tracestate string
	for rest := passThrough; rest != ""; {
		var pair string
		pair, rest, _ = strings.Cut(rest, "&")
		name, value, _ := strings.Cut(pair, "=")
		var dst *string
		switch {
		case strings.EqualFold(name, tracing.HeaderTraceparent):
			dst = &traceparent
		case strings.EqualFold(name, tracing.HeaderTracestate):
			dst = &tracestate
		default:
			continue
		}
		if *dst != "" {
			continue // the first value, as http.Header.Get reads it
		}
		if strings.ContainsAny(value, "%+") {
			value, _ = url.QueryUnescape(value)
		}
		*dst = value
	}
	return tracing.ParentOf(context.Background(), traceparent, tracestate, ev)
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
		a.parent = storedParent(a.passThrough, a.ev)
	}
	return a.parent
}

// startAttempt starts the span of the attempt, to the dead-letter sink
// with deadLetter, and returns the headers of its request, which carry the
// span's context.
func (a *attempt) startAttempt(deadLetter bool, header http.Header) (context.Context, tracing.Span, http.Header) {
	ctx, span := a.p.tracer.StartAttempt(a.traceParent(), a.ev, a.src.trace, a.t.trace, a.n, deadLetter)
	return ctx, span, tracedHeader(ctx, header)
}

// tracedHeader returns a copy of h that carries the trace context of ctx.
func tracedHeader(ctx context.Context, h http.Header) http.Header {
	c := make(http.Header, len(h)+2)
	for k, v := range h {
		c[k] = v
	}
	tracing.Inject(ctx, c)
	return c
}

// endAttempt ends the span of an attempt or a reply with its result; it
// does nothing without a span.
func endAttempt(span tracing.Span, r delivery.Result) {
	if !span.Recording() {
		span.EndAttempt(0, true, "")
		return
	}
	var reason string
	if r.Err != nil && !r.Success {
		reason = redact.Text(r.Err.Error())
	}
	span.EndAttempt(r.StatusCode, r.Success, reason)
}
