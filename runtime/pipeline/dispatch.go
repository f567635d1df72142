package pipeline

import (
	"context"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// DispatchMsg is the dispatch stage: one HTTP attempt per JetStream
// delivery of a message. A retry is a negative acknowledgement with the
// backoff as delay, and the attempt number is JetStream's delivery count
// (plus the attempts the route stage made before it stored the delivery),
// so retries and their count survive a restart.
func (p *Processor) DispatchMsg(ctx context.Context, id string, msg jetstream.Msg) {
	src := p.currentPlan().byID[id]
	if src == nil {
		p.settle(msg, release)
		return
	}
	st, tok, ok := src.names.ParseSubject(msg.Subject())
	if !ok {
		p.settle(msg, terminate)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		p.settle(msg, release)
		return
	}
	t := src.byToken[tok]
	if t == nil {
		p.settle(msg, p.keepGone(ctx, src, tok, msg, meta))
		return
	}
	if !t.ready {
		// Keep it, untouched by any attempt, until the target is ready.
		out := forward(msg, src.names.Subject(holdStage(st), tok))
		if err := p.pub.PublishAll(ctx, []*nats.Msg{out}, []string{msgID("hold", msg, meta, "")}, nil); err != nil {
			p.settle(msg, releaseAfter(routeRetryDelay))
			return
		}
		p.settle(msg, finished)
		return
	}
	ev, err := eventOf(msg)
	if err != nil {
		p.log.Error("dropping a stored delivery that holds no valid event", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.Drop(metrics.DropUnreadable)
		t.account.Drop(metrics.DropUnreadable)
		p.settle(msg, terminate)
		return
	}
	n := int(meta.NumDelivered)
	if prior, notBefore, ok := retryOf(msg.Headers()); ok {
		// A delivery the route stage stored after attempts of its own:
		// its first JetStream delivery only waits for the backoff.
		if n == 1 {
			p.settle(msg, retryAfter(time.Until(notBefore)))
			return
		}
		n += prior - 1
	}
	a := &attempt{p: p, src: src, t: t, ev: ev, n: n, accepted: acceptedOf(msg.Headers()), passThrough: msg.Headers().Get(cehttp.NATSPassThrough), id: deliveryID{stream: meta.Stream, seq: meta.Sequence.Stream, event: -1}}
	stop := keepClaim(msg, a.budget(), p.ackWait)
	defer stop()
	var v verdict
	if st == StageDead {
		v = a.deadLetter(ctx)
	} else {
		v = a.deliver(ctx)
	}
	p.settle(msg, v)
}

// keepClaim tells JetStream msg is still being worked on while an attempt
// of at most budget may outlast ackWait. It arms a timer rather than
// starting a goroutine: most attempts end long before it fires.
func keepClaim(msg jetstream.Msg, budget, ackWait time.Duration) (stop func()) {
	if budget < ackWait/2 {
		return func() {}
	}
	c := &claim{msg: msg, every: ackWait / 3}
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

// keepGone ends a stored delivery whose Trigger or Subscription the
// current plan does not serve (a reload deleted it): kept, reason
// unrouted, under the name this process last knew it by.
func (p *Processor) keepGone(ctx context.Context, src *Source, tok string, msg jetstream.Msg, meta *jetstream.MsgMetadata) verdict {
	t := src.goneTarget(tok)
	ev, err := eventOf(msg)
	if err != nil {
		p.log.Error("dropping a stored delivery that holds no valid event", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.Drop(metrics.DropUnreadable)
		t.account.Drop(metrics.DropUnreadable)
		return terminate
	}
	a := &attempt{p: p, src: src, t: t, ev: ev, n: int(meta.NumDelivered), accepted: acceptedOf(msg.Headers()),
		passThrough: msg.Headers().Get(cehttp.NATSPassThrough), id: deliveryID{stream: meta.Stream, seq: meta.Sequence.Stream, event: -1, token: tok}}
	return a.keepUnrouted(ctx)
}
