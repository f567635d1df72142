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

// Source is a Broker or Channel as its spans name it. Make it once, with
// the plan that serves it: its names are not made again for each span.
type Source struct {
	attr                   attribute.KeyValue
	key                    string
	ingressName, routeName string
}

// NewSource returns the Source of a Broker (broker) or Channel named key,
// NAMESPACE/NAME.
func NewSource(broker bool, key string) *Source {
	s := &Source{attr: AttrChannel.String(key), key: key, ingressName: "ingress " + key, routeName: "route " + key}
	if broker {
		s.attr = AttrBroker.String(key)
	}
	return s
}

// Target is a Trigger or Subscription as its spans name it, with the URLs
// of its destinations, their secrets masked by the caller.
type Target struct {
	attr                                   attribute.KeyValue
	key                                    string
	deliverName, deadLetterName, replyName string
	subscriberURL, replyURL, deadLetterURL string
}

// NewTarget returns the Target of a Trigger (trigger) or Subscription
// named key, NAMESPACE/NAME, delivering to subscriberURL, replying to
// replyURL and dead-lettering to deadLetterURL.
func NewTarget(trigger bool, key, subscriberURL, replyURL, deadLetterURL string) *Target {
	t := &Target{
		attr: AttrSubscription.String(key), key: key,
		deliverName: "deliver " + key, deadLetterName: "dead-letter " + key, replyName: "reply " + key,
		subscriberURL: subscriberURL, replyURL: replyURL, deadLetterURL: deadLetterURL,
	}
	if trigger {
		t.attr = AttrTrigger.String(key)
	}
	return t
}

// eventAttrs are the CloudEvents attributes of the semantic conventions
// that tell one event from another.
func eventAttrs(ev *event.Event, attrs []attribute.KeyValue) []attribute.KeyValue {
	attrs = append(attrs,
		semconv.CloudEventsEventID(ev.ID()),
		semconv.CloudEventsEventType(ev.Type()),
		semconv.CloudEventsEventSource(ev.Source()),
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
	return ParentOf(ctx, h.Get(HeaderTraceparent), h.Get(HeaderTracestate), ev)
}

// ParentOf is Parent given the values of traceparent and tracestate.
func ParentOf(ctx context.Context, traceparent, tracestate string, ev *event.Event) context.Context {
	if traceparent == "" && ev != nil {
		ext := ev.Extensions()
		traceparent, _ = ext[extensionTraceparent].(string)
		tracestate, _ = ext[extensionTracestate].(string)
	}
	if traceparent == "" {
		return ctx
	}
	return propagator.Extract(ctx, &traceCarrier{traceparent: traceparent, tracestate: tracestate})
}

// traceCarrier holds a trace context for the propagator to read.
type traceCarrier struct{ traceparent, tracestate string }

func (c *traceCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.traceparent
	case "tracestate":
		return c.tracestate
	}
	return ""
}

func (c *traceCarrier) Set(string, string) {}

func (c *traceCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// Inject writes the span context of ctx into h as traceparent and
// tracestate, replacing those h had.
func Inject(ctx context.Context, h http.Header) {
	delete(h, HeaderTraceparent)
	delete(h, HeaderTracestate)
	propagator.Inject(ctx, propagation.HeaderCarrier(h))
}

// Span is a span the runtime started, whose attributes are set when it
// ends: set in two calls, the SDK would copy them twice, and a span that
// is not sampled ignores them. The zero Span is none, for when tracing is
// off: ending it does nothing.
type Span struct {
	span  trace.Span
	attrs []attribute.KeyValue
}

// started returns the Span of span with room for n attributes, or none
// for a span that records nothing.
func started(span trace.Span, n int) Span {
	if !span.IsRecording() {
		return Span{span: span}
	}
	return Span{span: span, attrs: make([]attribute.KeyValue, 0, n)}
}

// Recording reports whether the span is sampled: its attributes are kept.
func (s Span) Recording() bool { return s.attrs != nil }

// end sets the attributes and ends the span.
func (s Span) end() {
	if s.attrs != nil {
		s.span.SetAttributes(s.attrs...)
	}
	s.span.End()
}

// StartIngress starts the span of a request that brought ev to the
// ingress of src, parented by the request's trace context (see Parent).
// start is when the request arrived.
func (t *Tracer) StartIngress(h http.Header, ev *event.Event, src *Source, start time.Time) (context.Context, Span) {
	ctx, span := t.tracer.Start(Parent(context.Background(), h, ev), src.ingressName,
		trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(start))
	s := started(span, 10)
	if s.Recording() {
		s.attrs = append(s.attrs, messagingSystem,
			semconv.MessagingOperationTypeReceive,
			semconv.MessagingDestinationName(src.key),
			semconv.HTTPRequestMethodPost,
			src.attr)
		s.attrs = eventAttrs(ev, s.attrs)
	}
	return ctx, s
}

// EndIngress ends an ingress span with the status code answered.
func (s Span) EndIngress(code int, err error) {
	if s.span == nil {
		return
	}
	if s.Recording() {
		s.attrs = append(s.attrs, semconv.HTTPResponseStatusCode(code))
		if err != nil {
			s.span.RecordError(err)
		}
		if code >= 500 || err != nil {
			s.span.SetStatus(codes.Error, http.StatusText(code))
		}
	}
	s.end()
}

// StartRoute starts the span of routing ev, read from the store of src,
// a child of the span in parent (see ParentOf).
func (t *Tracer) StartRoute(parent context.Context, ev *event.Event, src *Source) (context.Context, Span) {
	ctx, span := t.tracer.Start(parent, src.routeName, trace.WithSpanKind(trace.SpanKindConsumer))
	s := started(span, 9)
	if s.Recording() {
		s.attrs = append(s.attrs, messagingSystem,
			semconv.MessagingOperationTypeProcess,
			semconv.MessagingDestinationName(src.key),
			src.attr)
		s.attrs = eventAttrs(ev, s.attrs)
	}
	return ctx, s
}

// EndRoute ends a route span with the number of deliveries it made.
func (s Span) EndRoute(matched int) {
	if s.span == nil {
		return
	}
	if s.Recording() {
		s.attrs = append(s.attrs, AttrMatched.Int(matched))
	}
	s.end()
}

// StartAttempt starts the span of attempt n, from 1, to deliver ev from
// src to dst, or to dst's dead-letter sink; a child of the span in parent.
func (t *Tracer) StartAttempt(parent context.Context, ev *event.Event, src *Source, dst *Target, n int, deadLetter bool) (context.Context, Span) {
	name, url := dst.deliverName, dst.subscriberURL
	if deadLetter {
		name, url = dst.deadLetterName, dst.deadLetterURL
	}
	ctx, span := t.tracer.Start(parent, name, trace.WithSpanKind(trace.SpanKindClient))
	s := started(span, 16)
	if s.Recording() {
		attrs := s.attrs
		attrs = append(attrs, messagingSystem,
			semconv.MessagingOperationTypeSend,
			semconv.MessagingDestinationName(dst.key),
			src.attr, dst.attr,
			semconv.HTTPRequestMethodPost,
			semconv.URLFull(url),
			AttrAttempt.Int(n))
		if n > 1 {
			attrs = append(attrs, semconv.HTTPRequestResendCount(n-1))
		}
		if deadLetter {
			attrs = append(attrs, AttrDeadLetter.Bool(true))
		}
		s.attrs = eventAttrs(ev, attrs)
	}
	return ctx, s
}

// StartReply starts the span of attempt n, from 1, to deliver a reply of
// dst's subscriber to its reply destination, or with stored, of storing
// it in its Broker; a child of the attempt span in parent.
func (t *Tracer) StartReply(parent context.Context, reply *event.Event, dst *Target, n int, stored bool) (context.Context, Span) {
	kind := trace.SpanKindClient
	if stored {
		kind = trace.SpanKindProducer
	}
	ctx, span := t.tracer.Start(parent, dst.replyName, trace.WithSpanKind(kind))
	s := started(span, 14)
	if s.Recording() {
		attrs := s.attrs
		attrs = append(attrs, messagingSystem,
			semconv.MessagingOperationTypeSend,
			dst.attr,
			AttrAttempt.Int(n))
		if !stored {
			attrs = append(attrs, semconv.HTTPRequestMethodPost, semconv.URLFull(dst.replyURL))
		}
		if n > 1 {
			attrs = append(attrs, semconv.HTTPRequestResendCount(n-1))
		}
		s.attrs = eventAttrs(reply, attrs)
	}
	return ctx, s
}

// EndAttempt ends an attempt or reply span with its HTTP outcome: code is
// the status answered (0 when none was), reason why it failed, with
// secrets masked.
func (s Span) EndAttempt(code int, success bool, reason string) {
	if s.span == nil {
		return
	}
	if s.Recording() {
		if code != 0 {
			s.attrs = append(s.attrs, semconv.HTTPResponseStatusCode(code))
		}
		if !success {
			errType := semconv.ErrorTypeOther
			if code != 0 {
				errType = semconv.ErrorTypeKey.String(strconv.Itoa(code))
			}
			if reason == "" {
				reason = http.StatusText(code)
			}
			s.attrs = append(s.attrs, errType)
			s.span.SetStatus(codes.Error, reason)
		}
	}
	s.end()
}
