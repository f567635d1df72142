package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
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
	if len(src.targets) == 0 {
		// Nothing to evaluate: no need to read the event.
		e.settle(msg.Ack(), "acknowledge", msg)
		return
	}
	if cehttp.IsBatch(msg.Headers()) {
		e.routeBatch(ctx, src, msg, meta)
		return
	}
	ev, err := eventOf(msg)
	if err != nil {
		e.log.Error("dropping a stored message that holds no valid event", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.drop(dropUnreadable)
		e.settle(msg.Term(), "terminate", msg)
		return
	}
	var buf [8]int
	matched := src.match(ev, buf[:0])
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

// routeBatch routes the events of a batch message as routeMsg routes one:
// the message is acknowledged once the deliveries of all its events are
// stored. A delivery's message ID names the event by its place in the
// batch, so that routing the batch again stores nothing twice. An event
// that cannot be read is dropped alone.
func (e *Engine) routeBatch(ctx context.Context, src *source, msg jetstream.Msg, meta *jetstream.MsgMetadata) {
	if err := cehttp.CheckBatch(msg.Headers()); err != nil {
		e.log.Error("dropping a stored batch this version cannot read", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.drop(dropUnreadable)
		e.settle(msg.Term(), "terminate", msg)
		return
	}
	var (
		msgs    []*nats.Msg
		ids     []string
		matched []int
		buf     [8]int
	)
	rest := msg.Data()
	for i := 0; len(rest) > 0; i++ {
		h, data, next, err := cehttp.NextRecord(rest)
		if err != nil {
			e.log.Error("dropping the rest of a stored batch that cannot be read", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "event", i, "error", err)
			src.metrics.drop(dropUnreadable)
			break
		}
		rest = next
		ev, err := cehttp.FromNATS(&nats.Msg{Subject: msg.Subject(), Header: h, Data: data})
		if err != nil {
			e.log.Error("dropping a stored event that is not valid", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "event", i, "error", err)
			src.metrics.drop(dropUnreadable)
			continue
		}
		for j, idx := range src.match(ev, buf[:0]) {
			t := src.targets[idx]
			st := stageSend
			if !t.ready {
				st = stageHoldSend
			}
			// Each delivery gets its own headers: publishing adds its ID.
			dh := h
			if j > 0 {
				dh = make(nats.Header, len(h)+1)
				for k, v := range h {
					dh[k] = v
				}
			}
			msgs = append(msgs, &nats.Msg{Subject: src.names.subject(st, t.token), Header: dh, Data: data})
			ids = append(ids, fmt.Sprintf("route:%s:%d.%d:%s", meta.Stream, meta.Sequence.Stream, i, t.token))
			matched = append(matched, idx)
		}
	}
	if len(msgs) == 0 {
		e.settle(msg.Ack(), "acknowledge", msg)
		return
	}
	fresh := make([]bool, len(msgs))
	err := e.publishFresh(ctx, msgs, ids, fresh)
	countStored(src, matched, fresh)
	if err != nil {
		e.log.Warn("could not store the deliveries of a batch of events; routing it again later",
			src.kind.String(), src.obj.Key(), "events", len(msgs), "error", err)
		e.settle(msg.NakWithDelay(routeRetryDelay), "release", msg)
		return
	}
	e.settle(msg.Ack(), "acknowledge", msg)
}

// match returns the indexes in s.targets of the targets ev goes to, in
// dst: the matching Triggers of a Broker, every Subscription of a Channel.
func (s *source) match(ev *event.Event, dst []int) []int {
	if s.matcher != nil {
		return s.matcher.Match(ev, dst)
	}
	for i := range s.targets {
		dst = append(dst, i)
	}
	return dst
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
