package pipeline

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
	"github.com/knc-dev/knc/runtime/tracing"
)

// attempt is one try at delivering one event to one target, made by the
// route stage (the first try, see direct.go) or by the dispatch stage (a
// retry, or a delivery the route stage stored). It knows nothing of where
// the event is kept: it says what should happen next, and its caller
// settles the message or stores the delivery accordingly.
type attempt struct {
	p   *Processor
	src *Source
	t   *Target
	ev  *event.Event
	// n is the attempt number, from 1.
	n int
	// accepted is the ingress's knc-accepted header of the event.
	accepted string
	// passThrough is the event's knc-headers value: the headers of its
	// request that pass through to its deliveries (cehttp.PassThrough).
	passThrough string
	// id names the delivery in the message IDs of what the attempt stores
	// (a dead letter, a reply), so that trying again stores nothing twice.
	id deliveryID
	// countAccepted makes the attempt count its delivery as accepted when
	// it counts its outcome: a first attempt made by the route stage has no
	// stored message that counted it.
	countAccepted bool
	// parent is the context the attempt's span is a child of, when
	// tracing is on; see traceParent.
	parent context.Context
	// encoded is ev's request as the route stage encoded it once for
	// every delivery of the event, nil when it did not.
	encoded *delivery.Encoded
}

// deliveryID names a delivery by the stored message it came from: a
// delivery message of the delivery stream, or an event of an ingress
// message (its place in a batch, -1 for a message of one event) matched to
// the target with the subject token.
type deliveryID struct {
	stream string
	seq    uint64
	event  int
	token  string
}

// String is only needed when something is stored, so it is not made
// before.
func (d deliveryID) String() string {
	b := make([]byte, 0, len(d.stream)+len(d.token)+24)
	b = append(b, d.stream...)
	b = append(b, ':')
	b = strconv.AppendUint(b, d.seq, 10)
	if d.event >= 0 {
		b = append(b, '.')
		b = strconv.AppendInt(b, int64(d.event), 10)
	}
	b = append(b, ':')
	b = append(b, d.token...)
	return string(b)
}

func (a *attempt) logAttrs(args ...any) []any {
	return append([]any{a.src.kind.String(), a.src.obj.Key(), strings.ToLower(a.t.kind), a.t.obj.Key(), "event", a.ev.ID(), "attempt", a.n}, args...)
}

// budget is how long the attempt may take at most: a Subscription's reply
// has attempts of its own (see sendReply).
func (a *attempt) budget() time.Duration {
	timeout := a.t.timeout(a.p.attemptTimeout)
	b := timeout
	if a.t.replyURL != "" {
		for n := 1; n <= a.t.retry(); n++ {
			b += timeout + delivery.RetryDelay(a.t.delivery, n, delivery.Result{})
		}
		b += timeout
	}
	return b
}

// header returns the headers the attempt's requests carry: Kn-Namespace,
// and the event's pass-through headers.
func (a *attempt) header() http.Header {
	if a.passThrough == "" {
		return a.t.header
	}
	h := cehttp.DecodeHeader(a.passThrough)
	h[cehttp.HeaderNamespace] = a.t.header[cehttp.HeaderNamespace]
	return h
}

// send makes one HTTP attempt of ev to url with the target's options.
// Only a Trigger's subscriber gets StrictReply and no knativebrokerttl, as
// from Knative's Broker filter; a dead-letter sink or reply destination
// gets the event as it is.
func (a *attempt) send(ctx context.Context, ev *event.Event, url string, header http.Header, toSubscriber bool) delivery.Result {
	o := delivery.Options{Format: a.t.format(), Timeout: a.t.timeout(a.p.attemptTimeout), Header: header}
	if toSubscriber {
		o.OmitExtension = a.t.omittedExtension()
		o.StrictReply = a.t.kind == knative.KindTrigger
	}
	if ev == a.ev {
		// Send checks that it was made for o's format and extension.
		o.Encoded = a.encoded
	}
	start := time.Now()
	r := a.p.send.Send(ctx, ev, url, o)
	a.src.metrics.AttemptDuration.Observe(time.Since(start).Seconds())
	return r
}

// replyHeader is what a reply carries on: the pass-through headers of the
// subscriber's response and, unless the reply brings its own, the trace
// context of the event it answers, as Knative's dispatcher propagates it.
func (a *attempt) replyHeader(r delivery.Result) http.Header {
	h := r.ReplyHeader
	if h.Get("Traceparent") == "" && a.passThrough != "" {
		orig := cehttp.DecodeHeader(a.passThrough)
		for _, name := range []string{"Traceparent", "Tracestate"} {
			if v, ok := orig[name]; ok {
				if h == nil {
					h = http.Header{}
				}
				h[name] = v
			}
		}
	}
	return h
}

// sendReply delivers a Subscription's reply to its reply destination with
// attempts of its own, 1 + retry as for the subscriber, as Knative's
// dispatcher does: a failing reply never calls the subscriber again. The
// retries wait within the attempt; a crash meanwhile makes the whole
// delivery again.
func (a *attempt) sendReply(ctx, spanCtx context.Context, r delivery.Result) delivery.Result {
	header := a.replyHeader(r)
	if header == nil {
		header = a.t.header
	} else {
		header[cehttp.HeaderNamespace] = a.t.header[cehttp.HeaderNamespace]
	}
	for n := 1; ; n++ {
		h := header
		var span tracing.Span
		if spanCtx != nil {
			var replyCtx context.Context
			replyCtx, span = a.p.tracer.StartReply(spanCtx, r.Reply, a.t.trace, n, false)
			h = tracedHeader(replyCtx, header)
		}
		rr := a.send(ctx, r.Reply, a.t.replyURL, h, false)
		endAttempt(span, rr)
		if rr.Success || !rr.Retryable || n > a.t.retry() || ctx.Err() != nil {
			return rr
		}
		a.src.metrics.Retried.Inc()
		wait := time.NewTimer(delivery.RetryDelay(a.t.delivery, n, rr))
		select {
		case <-ctx.Done():
			wait.Stop()
			return rr
		case <-wait.C:
		}
	}
}

func (a *attempt) countAccept() {
	if a.countAccepted {
		a.t.account.Accepted.Inc()
	}
}

// drop gives up the delivery: it is counted for its source (by reason, as
// knc_events_dropped_total) and as the delivery's outcome for its target.
func (a *attempt) drop(reason string) {
	a.countAccept()
	a.src.metrics.Drop(reason)
	a.t.account.Drop(reason)
}

// deliver makes the attempt to the target's subscriber.
func (a *attempt) deliver(ctx context.Context) verdict {
	header := a.header()
	var spanCtx context.Context
	var span tracing.Span
	if a.p.tracer != nil {
		spanCtx, span, header = a.startAttempt(false, header)
	}
	r := a.send(ctx, a.ev, a.t.deliverURL, header, true)
	endAttempt(span, r)
	if ctx.Err() != nil {
		return release
	}
	failedURL := a.t.deliverURL
	replyFailed := false
	if r.Success && r.Reply != nil {
		switch {
		case a.t.kind == knative.KindTrigger:
			if err := a.enqueueReply(ctx, spanCtx, r.Reply, a.replyHeader(r)); err != nil {
				if ctx.Err() != nil {
					return release
				}
				// The reply is part of the delivery: failing to store it
				// fails the delivery, which is retried.
				r = delivery.Result{Retryable: true, Err: fmt.Errorf("storing the reply: %w", err)}
			}
		case a.t.replyURL != "":
			rr := a.sendReply(ctx, spanCtx, r)
			if ctx.Err() != nil {
				return release
			}
			if !rr.Success {
				r, failedURL, replyFailed = rr, a.t.replyURL, true
			}
		default:
			a.p.log.Info("dropping a reply: the subscription has no reply destination", a.logAttrs("reply", r.Reply.ID())...)
			a.src.metrics.Drop(metrics.DropNoReplyDestination)
		}
	}
	if !r.Success && !a.p.accepting.Load() {
		// Shutting down: the failure may be this runtime's own ingress
		// going away. Nothing is final while draining; the delivery is
		// tried again after the restart.
		return release
	}
	if r.Success {
		a.countAccept()
		a.src.metrics.Delivered.Inc()
		a.t.account.Delivered.Inc()
		if at, ok := acceptedAt(a.accepted); ok {
			a.src.metrics.Latency.Observe(time.Since(at).Seconds())
		}
		return finished
	}
	if !replyFailed {
		if v, ok := a.retry(r); ok {
			return v
		}
	}
	if a.t.deadLetterURL == "" {
		return a.keep(ctx, kept.ReasonNoDeadLetterSink, failedURL, r, "no dead-letter sink")
	}
	dl := delivery.DeadLetter(a.ev, failedURL, r)
	out := cehttp.ToNATS(dl, a.src.names.Subject(StageDead, a.t.token))
	if a.accepted != "" {
		out.Header[ingress.HeaderAccepted] = []string{a.accepted}
	}
	switch {
	case spanCtx != nil:
		// The dead-letter attempts are children of this one.
		out.Header[cehttp.NATSPassThrough] = []string{tracedPassThrough(spanCtx, a.passThrough)}
	case a.passThrough != "":
		out.Header[cehttp.NATSPassThrough] = []string{a.passThrough}
	}
	fresh := []bool{false}
	if err := a.p.pub.PublishAll(ctx, []*nats.Msg{out}, []string{"dead:" + a.id.String()}, fresh); err != nil {
		if ctx.Err() != nil {
			return release
		}
		a.p.log.Warn("could not store an event for its dead-letter sink; retrying the delivery later", a.logAttrs("error", err)...)
		return retryAfter(routeRetryDelay)
	}
	if fresh[0] {
		a.countAccept()
	}
	a.p.log.Info("sending an event that could not be delivered to the dead-letter sink", a.logAttrs(resultAttrs(failedURL, r)...)...)
	return finished
}

// deadLetter delivers an event of the dead stage to the dead-letter sink,
// retried like the delivery it replaces.
func (a *attempt) deadLetter(ctx context.Context) verdict {
	if a.t.deadLetterURL == "" {
		// A reload removed the sink after the event was set aside for it.
		return a.keep(ctx, kept.ReasonNoDeadLetterSink, "", delivery.Result{}, "its dead-letter sink was removed")
	}
	header := a.header()
	var span tracing.Span
	if a.p.tracer != nil {
		_, span, header = a.startAttempt(true, header)
	}
	r := a.send(ctx, a.ev, a.t.deadLetterURL, header, false)
	endAttempt(span, r)
	if ctx.Err() != nil {
		return release
	}
	if !r.Success && !a.p.accepting.Load() {
		return release
	}
	if r.Success {
		if a.t.keepDeadLettered && a.p.keeper != nil {
			if v := a.keepCopy(ctx); v != finished {
				return v
			}
		}
		a.src.metrics.DeadLettered.Inc()
		a.t.account.DeadLettered.Inc()
		return finished
	}
	if v, ok := a.retry(r); ok {
		return v
	}
	return a.keep(ctx, kept.ReasonDeadLetterFailed, a.t.deadLetterURL, r, "its dead-letter sink did not accept it either")
}

// retry schedules another attempt after a failed one, if the delivery
// options allow one.
func (a *attempt) retry(r delivery.Result) (verdict, bool) {
	if !r.Retryable || a.n > a.t.retry() {
		return verdict{}, false
	}
	delay := delivery.RetryDelay(a.t.delivery, a.n, r)
	a.p.log.Debug("delivery attempt failed; retrying", a.logAttrs(append(resultAttrs("", r), "delay", delay)...)...)
	a.src.metrics.Retried.Inc()
	return retryAfter(delay), true
}

// resultAttrs are the log attributes of a delivery's result. Logs are
// read by more people than the manifests: the password and query
// values of the URL are masked, in the URL and in the error.
func resultAttrs(url string, r delivery.Result) []any {
	attrs := []any{"status", r.StatusCode}
	if url != "" {
		attrs = append(attrs, "url", redact.URI(url))
	}
	if r.Err != nil {
		attrs = append(attrs, "error", redact.Text(r.Err.Error()))
	}
	return attrs
}

// enqueueReply stores a Trigger's reply in its Broker's ingress stream, so
// that it is evaluated against every Trigger of the Broker, with the TTL
// decremented. A reply that would reach TTL 0 is kept instead (see
// keepReply; not an error: the delivery itself succeeded).
func (a *attempt) enqueueReply(ctx, spanCtx context.Context, reply *event.Event, header http.Header) error {
	ttl, ok := ingress.TTL(a.ev)
	if !ok {
		ttl = a.p.defaultTTL
	}
	if rt, ok := ingress.TTL(reply); ok && rt < ttl {
		ttl = rt
	}
	ttl--
	if ttl <= 0 {
		return a.keepReply(ctx, reply)
	}
	reply.SetExtension(ingress.ExtensionTTL, ttl)
	var span tracing.Span
	if spanCtx != nil {
		// The reply is routed as a child of this span.
		var replyCtx context.Context
		replyCtx, span = a.p.tracer.StartReply(spanCtx, reply, a.t.trace, 1, true)
		header = tracedHeader(replyCtx, header)
	}
	out := cehttp.ToNATS(reply, a.src.names.In)
	stamp(out, time.Now())
	if v := cehttp.EncodeHeader(header); v != "" {
		out.Header[cehttp.NATSPassThrough] = []string{v}
	}
	fresh := []bool{false}
	err := a.p.pub.PublishAll(ctx, []*nats.Msg{out}, []string{"reply:" + a.id.String()}, fresh)
	if spanCtx != nil {
		var reason string
		if err != nil {
			reason = err.Error()
		}
		span.EndAttempt(0, err == nil, reason)
	}
	if err != nil {
		return err
	}
	if fresh[0] {
		a.src.metrics.Replies.Inc()
	}
	return nil
}
