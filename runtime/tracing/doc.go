// Package tracing makes the runtime's OpenTelemetry spans and exports them
// over OTLP: one span for each ingress request, for the routing of each
// event, for each delivery attempt (dead-letter attempts included) and for
// each reply. It is off unless configured, and then costs nothing: the
// engine holds a nil *Tracer and makes no span, context or attribute.
//
// Spans are parented by the W3C trace context (traceparent, tracestate) of
// the request, or else by the event's CloudEvents distributed-tracing
// extension. The runtime stores events and processes them later, on other
// goroutines and possibly after a restart, so the context of each span is
// written into the headers stored with the event (the traceparent of its
// pass-through headers), and the next stage's span is parented from there.
// A delivery request carries its attempt span's context, so that the
// subscriber's span is a child of the attempt.
//
// The event's traceparent extension is never rewritten: the CloudEvents
// extension carries the context the event was produced in, which
// intermediaries keep as it is.
package tracing
