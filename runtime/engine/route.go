package engine

import (
	"context"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// routeRetryDelay is how long an event whose deliveries could not be stored
// waits before it is routed again.
const routeRetryDelay = time.Second

// routeMsg is the route stage: it evaluates a Broker's Triggers once for an
// event from the ingress stream (a Channel's Subscriptions all match) and
// stores one delivery message per match. The ingress message is
// acknowledged only once every delivery message is stored; if that fails,
// the event is routed again later and JetStream discards the deliveries
// already stored as duplicates (by message ID), so that each Trigger is
// still evaluated into exactly one delivery.
func (e *Engine) routeMsg(ctx context.Context, id string, msg jetstream.Msg) {
	src := e.currentPlan().byID[id]
	if src == nil {
		// The source was removed by a reload; its pipeline is stopping.
		e.settle(msg.Nak(), "release", msg)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		e.settle(msg.Nak(), "release", msg)
		return
	}
	ev, err := eventOf(msg)
	if err != nil {
		e.log.Error("dropping a stored message that holds no valid event", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.drop(dropUnreadable)
		e.settle(msg.Term(), "terminate", msg)
		return
	}
	var matched []int
	if src.matcher != nil {
		var buf [8]int
		matched = src.matcher.Match(ev, buf[:0])
	} else {
		matched = make([]int, len(src.targets))
		for i := range matched {
			matched[i] = i
		}
	}
	if len(matched) == 0 {
		e.settle(msg.Ack(), "acknowledge", msg)
		return
	}
	msgs := make([]*nats.Msg, len(matched))
	ids := make([]string, len(matched))
	for i, idx := range matched {
		t := src.targets[idx]
		st := stageSend
		if !t.ready {
			st = stageHoldSend
		}
		msgs[i] = forward(msg, src.names.subject(st, t.token))
		ids[i] = msgID("route", msg, meta, t.token)
	}
	fresh := make([]bool, len(msgs))
	if err := e.publishFresh(ctx, msgs, ids, fresh); err != nil {
		e.log.Warn("could not store the deliveries of an event; routing it again later",
			src.kind.String(), src.obj.Key(), "event", ev.ID(), "error", err)
		countStored(src, matched, fresh)
		e.settle(msg.NakWithDelay(routeRetryDelay), "release", msg)
		return
	}
	countStored(src, matched, fresh)
	e.settle(msg.Ack(), "acknowledge", msg)
}

// unparkMsg moves a held delivery of a target that has become ready back to
// its active stage.
func (e *Engine) unparkMsg(ctx context.Context, id string, msg jetstream.Msg) {
	src := e.currentPlan().byID[id]
	if src == nil {
		e.settle(msg.Nak(), "release", msg)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		e.settle(msg.Nak(), "release", msg)
		return
	}
	hold, tok, ok := src.names.parseSubject(msg.Subject())
	if !ok {
		e.settle(msg.Term(), "terminate", msg)
		return
	}
	if t := src.byToken[tok]; t != nil && !t.ready {
		// A reload made it unready again after this message was handed
		// out; the next unpark consumer will not see it until it is ready.
		e.settle(msg.NakWithDelay(e.opts.AckWait), "release", msg)
		return
	}
	// Deliveries of deleted targets move too; the dispatch stage drops
	// and counts them.
	out := forward(msg, src.names.subject(activeStage(hold), tok))
	if err := e.publishAll(ctx, []*nats.Msg{out}, []string{msgID("unpark", msg, meta, "")}); err != nil {
		e.settle(msg.NakWithDelay(routeRetryDelay), "release", msg)
		return
	}
	e.settle(msg.Ack(), "acknowledge", msg)
}
