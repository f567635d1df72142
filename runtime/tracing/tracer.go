package tracing

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope of the runtime's spans.
const ScopeName = "github.com/knc-dev/knc/runtime"

// Attributes knc adds where OpenTelemetry's semantic conventions have
// none: the objects a span concerns, as NAMESPACE/NAME, and the delivery.
const (
	AttrBroker       = attribute.Key("knc.broker")
	AttrChannel      = attribute.Key("knc.channel")
	AttrTrigger      = attribute.Key("knc.trigger")
	AttrSubscription = attribute.Key("knc.subscription")
	// AttrAttempt is the attempt number of a delivery, from 1.
	AttrAttempt = attribute.Key("knc.delivery.attempt")
	// AttrDeadLetter marks an attempt to deliver to the dead-letter sink.
	AttrDeadLetter = attribute.Key("knc.delivery.dead_letter")
	// AttrMatched is how many Triggers or Subscriptions an event goes to.
	AttrMatched = attribute.Key("knc.route.matched")
)

// messagingSystem names knc in messaging.system, which OpenTelemetry
// leaves open to systems it does not list.
var messagingSystem = semconv.MessagingSystemKey.String("knative")

// propagator reads and writes the W3C trace context, as Knative does.
var propagator = propagation.TraceContext{}

// Header names of the W3C trace context.
const (
	HeaderTraceparent = "Traceparent"
	HeaderTracestate  = "Tracestate"
)

// Extension names of the CloudEvents distributed-tracing extension.
const (
	extensionTraceparent = "traceparent"
	extensionTracestate  = "tracestate"
)

// Tracer makes the runtime's spans. The engine keeps a nil *Tracer when
// tracing is off and checks for it before preparing anything for a span.
type Tracer struct {
	tracer   trace.Tracer
	provider *sdktrace.TracerProvider
}

// NewProvider returns a Tracer whose spans go to tp; Shutdown shuts tp
// down.
func NewProvider(tp *sdktrace.TracerProvider) *Tracer {
	return &Tracer{tracer: tp.Tracer(ScopeName), provider: tp}
}

// Shutdown exports the spans not yet exported and stops the exporter.
func (t *Tracer) Shutdown(ctx context.Context) error {
	if t == nil {
		return nil
	}
	return t.provider.Shutdown(ctx)
}

// Object is a Broker, Channel, Trigger or Subscription a span concerns.
type Object struct {
	// Kind is "Broker", "Channel", "Trigger" or "Subscription" (any case).
	Kind string
	// Key is NAMESPACE/NAME.
	Key string
}

func (o Object) attr() attribute.KeyValue {
	switch o.Kind {
	case "Broker", "broker":
		return AttrBroker.String(o.Key)
	case "Trigger", "trigger":
		return AttrTrigger.String(o.Key)
	case "Subscription", "subscription":
		return AttrSubscription.String(o.Key)
	}
	return AttrChannel.String(o.Key)
}

// eventAttrs are the CloudEvents attributes of the semantic conventions.
func eventAttrs(ev *event.Event, attrs []attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs,
		semconv.CloudEventsEventID(ev.ID()),
		semconv.CloudEventsEventSource(ev.Source()),
		semconv.CloudEventsEventSpecVersion(ev.SpecVersion()),
		semconv.CloudEventsEventType(ev.Type()),
		semconv.MessagingMessageID(ev.ID()),
	)
	if s := ev.Subject(); s != "" {
		attrs = append(attrs, semconv.CloudEventsEventSubject(s))
	}
	return attrs
}

// Parent returns a context holding the remote span context of h's
// traceparent, or else of ev's distributed-tracing extension; without
// either, ctx as it is.
func Parent(ctx context.Context, h http.Header, ev *event.Event) context.Context {
	if h.Get(HeaderTraceparent) != "" {
		return propagator.Extract(ctx, propagation.HeaderCarrier(h))
	}
	if ev == nil {
		return ctx
	}
	tp, _ := ev.Extensions()[extensionTraceparent].(string)
	if tp == "" {
		return ctx
	}
	carrier := propagation.MapCarrier{"traceparent": tp}
	if ts, _ := ev.Extensions()[extensionTracestate].(string); ts != "" {
		carrier["tracestate"] = ts
	}
	return propagator.Extract(ctx, carrier)
}

// Inject writes the span context of ctx into h as traceparent and
// tracestate, replacing those h had.
func Inject(ctx context.Context, h http.Header) {
	delete(h, HeaderTraceparent)
	delete(h, HeaderTracestate)
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// StartIngress starts the span of a request that brought ev to the
// ingress of src, parented by the request's trace context (see Parent).
// start is when the request arrived.
func (t *Tracer) StartIngress(h http.Header, ev *event.Event, src Object, start time.Time) (context.Context, trace.Span) {
	attrs := make([]attribute.KeyValue, 0, 12)
	attrs = append(attrs, messagingSystem,
		semconv.MessagingOperationTypeReceive,
		semconv.MessagingOperationName("ingress"),
		semconv.MessagingDestinationName(src.Key),
		semconv.HTTPRequestMethodPost,
		src.attr())
	attrs = eventAttrs(ev, attrs)
	return t.tracer.Start(Parent(context.Background(), h, ev), "ingress "+src.Key,
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start), trace.WithAttributes(attrs...))
}

// EndIngress ends an ingress span with the status code answered.
func EndIngress(span trace.Span, code int, err error) {
	span.SetAttributes(semconv.HTTPResponseStatusCode(code))
	if code >= 500 || err != nil {
		if err != nil {
			span.RecordError(err)
		}
		span.SetStatus(codes.Error, http.StatusText(code))
	}
	span.End()
}

// StartRoute starts the span of routing ev, read from the store of src,
// parented by the trace context stored with it (h, the event's
// pass-through headers, else its extension).
func (t *Tracer) StartRoute(h http.Header, ev *event.Event, src Object) (context.Context, trace.Span) {
	attrs := make([]attribute.KeyValue, 0, 11)
	attrs = append(attrs, messagingSystem,
		semconv.MessagingOperationTypeProcess,
		semconv.MessagingOperationName("route"),
		semconv.MessagingDestinationName(src.Key),
		src.attr())
	attrs = eventAttrs(ev, attrs)
	return t.tracer.Start(Parent(context.Background(), h, ev), "route "+src.Key,
		trace.WithSpanKind(trace.SpanKindConsumer), trace.WithAttributes(attrs...))
}

// EndRoute ends a route span with the number of deliveries it made.
func EndRoute(span trace.Span, matched int) {
	span.SetAttributes(AttrMatched.Int(matched))
	span.End()
}

// Attempt describes one HTTP attempt at a delivery.
type Attempt struct {
	Source, Target Object
	// N is the attempt number, from 1.
	N int
	// DeadLetter marks an attempt at the dead-letter sink.
	DeadLetter bool
	// URL is where the attempt goes, with its secrets masked.
	URL string
}

// StartAttempt starts the span of a delivery attempt of ev, a child of the
// span in parent.
func (t *Tracer) StartAttempt(parent context.Context, ev *event.Event, a Attempt) (context.Context, trace.Span) {
	name := "deliver "
	if a.DeadLetter {
		name = "dead-letter "
	}
	attrs := make([]attribute.KeyValue, 0, 16)
	attrs = append(attrs, messagingSystem,
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName(name[:len(name)-1]),
		semconv.MessagingDestinationName(a.Target.Key),
		a.Source.attr(), a.Target.attr(),
		semconv.HTTPRequestMethodPost,
		semconv.URLFull(a.URL),
		AttrAttempt.Int(a.N),
		AttrDeadLetter.Bool(a.DeadLetter))
	if a.N > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(a.N-1))
	}
	attrs = eventAttrs(ev, attrs)
	return t.tracer.Start(parent, name+a.Target.Key, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
}

// StartReply starts the span of delivering or storing a reply of a
// Trigger's or Subscription's subscriber, a child of the attempt span in
// parent. url is "" for a reply stored in a Broker.
func (t *Tracer) StartReply(parent context.Context, reply *event.Event, target Object, n int, url string) (context.Context, trace.Span) {
	attrs := make([]attribute.KeyValue, 0, 14)
	attrs = append(attrs, messagingSystem,
		semconv.MessagingOperationTypeSend,
		semconv.MessagingOperationName("reply"),
		target.attr(),
		AttrAttempt.Int(n))
	if url != "" {
		attrs = append(attrs, semconv.HTTPRequestMethodPost, semconv.URLFull(url))
	}
	if n > 1 {
		attrs = append(attrs, semconv.HTTPRequestResendCount(n-1))
	}
	attrs = eventAttrs(reply, attrs)
	kind := trace.SpanKindClient
	if url == "" {
		kind = trace.SpanKindProducer
	}
	return t.tracer.Start(parent, "reply "+target.Key, trace.WithSpanKind(kind), trace.WithAttributes(attrs...))
}

// EndAttempt ends an attempt or reply span with its HTTP outcome: code is
// the status answered (0 when none was), reason why it failed, with
// secrets masked.
func EndAttempt(span trace.Span, code int, success bool, reason string) {
	if code != 0 {
		span.SetAttributes(semconv.HTTPResponseStatusCode(code))
	}
	if !success {
		errType := "_OTHER"
		if code != 0 {
			errType = strconv.Itoa(code)
		}
		if reason == "" {
			reason = http.StatusText(code)
		}
		span.SetAttributes(semconv.ErrorTypeKey.String(errType))
		span.SetStatus(codes.Error, reason)
	}
	span.End()
}
