package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/resolve"
)

// dispatchMsg is the dispatch stage: one HTTP attempt per JetStream
// delivery of a message. A retry is a negative acknowledgement with the
// backoff as delay, and the attempt number is JetStream's delivery count,
// so retries and their count survive a restart.
func (e *Engine) dispatchMsg(ctx context.Context, id string, msg jetstream.Msg) {
	src := e.currentPlan().byID[id]
	if src == nil {
		e.settle(msg.Nak(), "release", msg)
		return
	}
	st, tok, ok := src.names.parseSubject(msg.Subject())
	if !ok {
		e.settle(msg.Term(), "terminate", msg)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		e.settle(msg.Nak(), "release", msg)
		return
	}
	t := src.byToken[tok]
	if t == nil {
		e.log.Warn("dropping a delivery whose trigger or subscription no longer exists",
			src.kind.String(), src.obj.Key(), "target", tok)
		src.metrics.drop(dropUnrouted)
		e.metrics.accounting.forToken(src, tok).drop(dropUnrouted)
		e.settle(msg.Ack(), "acknowledge", msg)
		return
	}
	if !t.ready {
		// Keep it, untouched by any attempt, until the target is ready.
		out := forward(msg, src.names.subject(holdStage(st), tok))
		if err := e.publishAll(ctx, []*nats.Msg{out}, []string{msgID("hold", msg, meta, "")}); err != nil {
			e.settle(msg.NakWithDelay(routeRetryDelay), "release", msg)
			return
		}
		e.settle(msg.Ack(), "acknowledge", msg)
		return
	}
	ev, err := eventOf(msg)
	if err != nil {
		e.log.Error("dropping a stored delivery that holds no valid event", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.drop(dropUnreadable)
		t.account.drop(dropUnreadable)
		e.settle(msg.Term(), "terminate", msg)
		return
	}
	d := &dispatch{e: e, src: src, t: t, msg: msg, meta: meta, ev: ev, attempt: int(meta.NumDelivered)}
	stop := d.keepClaim()
	defer stop()
	if st == stageDead {
		d.deadLetter(ctx)
	} else {
		d.deliver(ctx)
	}
}

// dispatch is one delivery attempt of one message.
type dispatch struct {
	e       *Engine
	src     *source
	t       *target
	msg     jetstream.Msg
	meta    *jetstream.MsgMetadata
	ev      *event.Event
	attempt int
}

func (d *dispatch) logAttrs(args ...any) []any {
	return append([]any{d.src.kind.String(), d.src.obj.Key(), strings.ToLower(d.t.kind), d.t.obj.Key(), "event", d.ev.ID(), "attempt", d.attempt}, args...)
}

// keepClaim tells JetStream the message is still being worked on while an
// attempt (and a Subscription's reply) may outlast AckWait. It arms a timer
// rather than starting a goroutine: most attempts end long before it fires.
func (d *dispatch) keepClaim() (stop func()) {
	ackWait := d.e.opts.AckWait
	budget := d.t.timeout(d.e.opts.AttemptTimeout)
	if d.t.replyURL != "" {
		budget *= 2
	}
	if budget < ackWait/2 {
		return func() {}
	}
	c := &claim{msg: d.msg, every: ackWait / 3}
	c.mu.Lock()
	c.timer = time.AfterFunc(c.every, c.renew)
	c.mu.Unlock()
	return c.stop
}

// claim renews a message's claim every so often until stopped.
type claim struct {
	msg     jetstream.Msg
	every   time.Duration
	mu      sync.Mutex
	timer   *time.Timer
	stopped bool
}

func (c *claim) renew() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stopped {
		return
	}
	_ = c.msg.InProgress()
	c.timer.Reset(c.every)
}

func (c *claim) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	c.timer.Stop()
}

func (d *dispatch) send(ctx context.Context, ev *event.Event, url string) delivery.Result {
	start := time.Now()
	r := d.e.sender.Attempt(ctx, ev, url, d.t.format(), d.t.timeout(d.e.opts.AttemptTimeout))
	d.src.metrics.attemptDuration.Observe(time.Since(start).Seconds())
	return r
}

// abandoned reports whether the attempt was cut short by shutdown; the
// message is then handed back without counting as a failure.
func (d *dispatch) abandoned(ctx context.Context) bool {
	if ctx.Err() == nil {
		return false
	}
	d.e.settle(d.msg.Nak(), "release", d.msg)
	return true
}

func (d *dispatch) deliver(ctx context.Context) {
	r := d.send(ctx, d.ev, d.t.deliverURL)
	if d.abandoned(ctx) {
		return
	}
	failedURL := d.t.deliverURL
	if r.Success && r.Reply != nil {
		switch {
		case d.t.kind == resolve.KindTrigger:
			if err := d.enqueueReply(ctx, r.Reply); err != nil {
				if d.abandoned(ctx) {
					return
				}
				// The reply is part of the delivery: failing to store it
				// fails the delivery, which is retried.
				r = delivery.Result{Retryable: true, Err: fmt.Errorf("storing the reply: %w", err)}
			}
		case d.t.replyURL != "":
			rr := d.send(ctx, r.Reply, d.t.replyURL)
			if d.abandoned(ctx) {
				return
			}
			if !rr.Success {
				r, failedURL = rr, d.t.replyURL
			}
		default:
			d.e.log.Info("dropping a reply: the subscription has no reply destination", d.logAttrs("reply", r.Reply.ID())...)
			d.src.metrics.drop(dropNoReplyDestination)
		}
	}
	if !r.Success && !d.e.accepting.Load() {
		// Shutting down: the failure may be this runtime's own ingress
		// going away. Nothing is final while draining; the delivery is
		// tried again after the restart.
		d.e.settle(d.msg.Nak(), "release", d.msg)
		return
	}
	if r.Success {
		d.src.metrics.delivered.Inc()
		d.t.account.delivered.Inc()
		if at, ok := acceptedAt(d.msg.Headers()); ok {
			d.src.metrics.latency.Observe(time.Since(at).Seconds())
		}
		d.e.settle(d.msg.Ack(), "acknowledge", d.msg)
		return
	}
	if d.retry(r) {
		return
	}
	if d.t.deadLetterURL == "" {
		d.e.log.Warn("dropping an event that could not be delivered: no dead-letter sink", d.logAttrs(resultAttrs(failedURL, r)...)...)
		d.drop(dropNoDeadLetterSink)
		d.e.settle(d.msg.Ack(), "acknowledge", d.msg)
		return
	}
	dl := delivery.DeadLetter(d.ev, failedURL, r)
	out := cehttp.ToNATS(dl, d.src.names.subject(stageDead, d.t.token))
	if v := d.msg.Headers()[headerAccepted]; len(v) > 0 {
		out.Header[headerAccepted] = v
	}
	if err := d.e.publishAll(ctx, []*nats.Msg{out}, []string{msgID("dead", d.msg, d.meta, "")}); err != nil {
		if d.abandoned(ctx) {
			return
		}
		d.e.log.Warn("could not store an event for its dead-letter sink; retrying the delivery later", d.logAttrs("error", err)...)
		d.e.settle(d.msg.NakWithDelay(routeRetryDelay), "release", d.msg)
		return
	}
	d.e.log.Info("sending an event that could not be delivered to the dead-letter sink", d.logAttrs(resultAttrs(failedURL, r)...)...)
	d.e.settle(d.msg.Ack(), "acknowledge", d.msg)
}

// deadLetter delivers a message of the dead stage to the dead-letter sink,
// retried like the delivery it replaces.
func (d *dispatch) deadLetter(ctx context.Context) {
	if d.t.deadLetterURL == "" {
		// A reload removed the sink after the event was set aside for it.
		d.e.log.Warn("dropping an event that could not be delivered: its dead-letter sink was removed", d.logAttrs()...)
		d.drop(dropNoDeadLetterSink)
		d.e.settle(d.msg.Ack(), "acknowledge", d.msg)
		return
	}
	r := d.send(ctx, d.ev, d.t.deadLetterURL)
	if d.abandoned(ctx) {
		return
	}
	if !r.Success && !d.e.accepting.Load() {
		d.e.settle(d.msg.Nak(), "release", d.msg)
		return
	}
	if r.Success {
		d.src.metrics.deadLettered.Inc()
		d.t.account.deadLettered.Inc()
		d.e.settle(d.msg.Ack(), "acknowledge", d.msg)
		return
	}
	if d.retry(r) {
		return
	}
	d.e.log.Error("dropping an event: its dead-letter sink did not accept it either", d.logAttrs(resultAttrs(d.t.deadLetterURL, r)...)...)
	d.drop(dropDeadLetterFailed)
	d.e.settle(d.msg.Ack(), "acknowledge", d.msg)
}

// retry schedules another attempt after a failed one, if the delivery
// options allow one.
func (d *dispatch) retry(r delivery.Result) bool {
	if !r.Retryable || d.attempt > d.t.retry() {
		return false
	}
	delay := delivery.RetryDelay(d.t.delivery, d.attempt, r)
	d.e.log.Debug("delivery attempt failed; retrying", d.logAttrs(append(resultAttrs("", r), "delay", delay)...)...)
	d.src.metrics.retried.Inc()
	d.e.settle(nakAfter(d.msg, delay), "schedule a retry for", d.msg)
	return true
}

func resultAttrs(url string, r delivery.Result) []any {
	attrs := []any{"status", r.StatusCode}
	if url != "" {
		attrs = append(attrs, "url", url)
	}
	if r.Err != nil {
		attrs = append(attrs, "error", r.Err)
	}
	return attrs
}

// errTTL reports a reply dropped because the loop limit was reached.
var errTTL = errors.New("ttl exhausted")

// enqueueReply stores a Trigger's reply in its Broker's ingress stream, so
// that it is evaluated against every Trigger of the Broker, with the TTL
// decremented. A reply that would reach TTL 0 is dropped (not an error:
// the delivery itself succeeded).
func (d *dispatch) enqueueReply(ctx context.Context, reply *event.Event) error {
	ttl, ok := ttlOf(d.ev)
	if !ok {
		ttl = d.e.opts.DefaultTTL
	}
	if rt, ok := ttlOf(reply); ok && rt < ttl {
		ttl = rt
	}
	ttl--
	if ttl <= 0 {
		d.e.log.Info("dropping a reply: the event's TTL is exhausted, which usually means a reply loop",
			d.logAttrs("reply", reply.ID(), "reason", errTTL)...)
		d.src.metrics.drop(dropTTL)
		return nil
	}
	reply.SetExtension(ExtensionTTL, ttl)
	out := cehttp.ToNATS(reply, d.src.names.in)
	stamp(out, time.Now())
	fresh := []bool{false}
	if err := d.e.publishFresh(ctx, []*nats.Msg{out}, []string{msgID("reply", d.msg, d.meta, "")}, fresh); err != nil {
		return err
	}
	if fresh[0] {
		d.src.metrics.replies.Inc()
	}
	return nil
}
