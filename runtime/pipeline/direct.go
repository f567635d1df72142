package pipeline

import (
	"context"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/stage"
)

// First attempts.
//
// Storing a delivery message, handing it to the dispatch stage and removing
// it again costs more than the HTTP attempt it waits for, and almost every
// delivery succeeds at its first attempt. So the route stage makes the
// first attempt itself, from the event it has just read, and stores a
// delivery in the delivery stream only when that attempt asks for a retry,
// or when the target cannot take one more attempt now (it is not ready, or
// it has as many in progress as it may and none ended for a while: a slow
// subscriber must not hold back the others). The ingress message is
// acknowledged once each of its deliveries ended or is stored, so that an
// accepted event is still never lost: a crash before that routes the
// message again, and its deliveries are attempted again (at least once).

// Tuning of first attempts.
const (
	// slotWait is how long routing waits for a target to take one more
	// first attempt before storing the delivery for the dispatch stage.
	slotWait = 50 * time.Millisecond
	// targetShare is the share of a source's first attempts in progress
	// that one target may have, so that one slow subscriber leaves room
	// for the others.
	targetShare = 0.75
)

// Headers of a delivery the route stage stored after an attempt of its own.
const (
	// headerAttempts is how many attempts were made before it was stored.
	headerAttempts = "Knc-Attempts"
	// headerNotBefore is when the next attempt is due (Unix nanoseconds).
	headerNotBefore = "Knc-Not-Before"
)

// retryOf reads the headers of a delivery stored after an attempt.
func retryOf(h nats.Header) (prior int, notBefore time.Time, ok bool) {
	a, nb := h[headerAttempts], h[headerNotBefore]
	if len(a) == 0 || len(nb) == 0 {
		return 0, time.Time{}, false
	}
	n, err1 := strconv.Atoi(a[0])
	t, err2 := strconv.ParseInt(nb[0], 10, 64)
	if err1 != nil || err2 != nil || n < 0 {
		return 0, time.Time{}, false
	}
	return n, time.Unix(0, t), true
}

// Lane runs the first attempts of one Broker or Channel: at most
// DeliveryConcurrency at a time, on a pool of workers. It outlives
// reloads.
type Lane struct {
	slots chan struct{}
	jobs  *stage.Pool[func(context.Context)]
	// congestedUntil (Unix nanoseconds) is set when no slot came free
	// for slotWait: slow targets hold them all. It is then congestion
	// from now, for the lane or a target.
	congestedUntil atomic.Int64
	congestion     time.Duration
}

// NewLane returns a lane of capacity workers whose attempts end with work.
func NewLane(work context.Context, capacity int) *Lane {
	return &Lane{
		slots:      make(chan struct{}, capacity),
		jobs:       stage.NewPool(work, capacity, func(ctx context.Context, job func(context.Context)) { job(ctx) }),
		congestion: slotWait,
	}
}

// TargetSlots is how many first attempts one target may have in progress
// on a lane of the given capacity.
func TargetSlots(capacity int) int {
	return max(1, int(float64(capacity)*targetShare))
}

// acquire takes a slot of the lane and one of t, waiting at most slotWait
// for each. A target, or the lane, that had none free for that long is
// congested: the next deliveries to it, or to any target, are stored
// without waiting, for l.congestion, so that routing goes on at the speed
// of storing while slow subscribers hold the slots.
func (l *Lane) acquire(t *Target, timer **time.Timer) bool {
	now := time.Now().UnixNano()
	if now < l.congestedUntil.Load() || now < t.congestedUntil.Load() {
		return false
	}
	select {
	case t.slots <- struct{}{}:
	default:
		if !waitSlot(t.slots, timer) {
			t.congestedUntil.Store(time.Now().Add(l.congestion).UnixNano())
			return false
		}
	}
	select {
	case l.slots <- struct{}{}:
		return true
	default:
		if waitSlot(l.slots, timer) {
			return true
		}
		l.congestedUntil.Store(time.Now().Add(l.congestion).UnixNano())
		<-t.slots
		return false
	}
}

func waitSlot(slots chan struct{}, timer **time.Timer) bool {
	if *timer == nil {
		*timer = time.NewTimer(slotWait)
	} else {
		(*timer).Reset(slotWait)
	}
	select {
	case slots <- struct{}{}:
		(*timer).Stop()
		return true
	case <-(*timer).C:
		return false
	}
}

// run has a worker run job, with a context that ends with the engine's
// work; job must end with l.release.
func (l *Lane) run(job func(context.Context)) { l.jobs.Submit(job) }

func (l *Lane) release(t *Target) {
	<-t.slots
	<-l.slots
}

// Close ends the workers; no attempt may start after it.
func (l *Lane) Close() { l.jobs.Close() }

// Wait waits for the first attempts in progress, or for ctx to end.
func (l *Lane) Wait(ctx context.Context) error { return l.jobs.Wait(ctx) }

// routed is the routing of one ingress message: the deliveries it stores
// and the first attempts it makes. The message is settled when the last of
// them ends.
type routed struct {
	p    *Processor
	src  *Source
	msg  jetstream.Msg
	meta *jetstream.MsgMetadata
	lane *Lane

	// Deliveries stored without an attempt: to targets not ready, or that
	// cannot take one more attempt now.
	stored  []*nats.Msg
	ids     []string
	matched []int

	timer   *time.Timer
	budget  time.Duration
	pending atomic.Int32
	// failed: a delivery could not be stored; the message is routed again.
	failed atomic.Bool
	// released: shutting down; the message is routed again after the
	// restart.
	released  atomic.Bool
	stopClaim func()
}

func (p *Processor) newRouted(src *Source, msg jetstream.Msg, meta *jetstream.MsgMetadata) *routed {
	r := &routed{p: p, src: src, msg: msg, meta: meta, lane: src.lane}
	r.pending.Store(1)
	return r
}

// storedEvent is an event as the ingress stored it: a message of its own,
// or the index-th record of a batch, whose headers are read again only for
// a delivery that is stored.
type storedEvent struct {
	header   nats.Header
	record   []byte
	data     []byte
	accepted string
	// passThrough is the event's knc-headers value.
	passThrough string
	index       int
	// trace is the context of the span of routing the event, unset when
	// tracing is off. The deliveries routing stores carry it.
	trace context.Context
	// encoded is the event's request, encoded once when it goes to more
	// than one target (see shareEncoding).
	encoded *delivery.Encoded
}

// storedHeaders returns a copy of the event's NATS headers for a delivery
// message, with room for extra more.
func (s storedEvent) storedHeaders(extra int) nats.Header {
	h := cloneHeader(s.headers(), extra+1)
	if s.trace != nil {
		h[cehttp.NATSPassThrough] = []string{tracedPassThrough(s.trace, s.passThrough)}
	}
	return h
}

// headers returns the event's NATS headers, a map of its own for a record.
func (s storedEvent) headers() nats.Header {
	if s.record == nil {
		return s.header
	}
	h, _, _, err := cehttp.NextRecord(s.record)
	if err != nil {
		// RecordEvent read this record already.
		return nats.Header{}
	}
	return h
}

// add routes one event to the target src.targets[idx].
func (r *routed) add(ev *event.Event, stored storedEvent, idx int) {
	t := r.src.targets[idx]
	id := deliveryID{stream: r.meta.Stream, seq: r.meta.Sequence.Stream, event: stored.index, token: t.token}
	if !t.ready {
		r.store(r.src.names.Subject(StageHoldSend, t.token), stored, idx, id)
		return
	}
	if !r.lane.acquire(t, &r.timer) {
		r.store(r.src.names.Subject(StageSend, t.token), stored, idx, id)
		return
	}
	a := &attempt{p: r.p, src: r.src, t: t, ev: ev, n: 1, accepted: stored.accepted, passThrough: stored.passThrough, id: id, countAccepted: true, parent: stored.trace, encoded: stored.encoded}
	if b := a.budget(); b > r.budget {
		r.budget = b
	}
	r.pending.Add(1)
	r.lane.run(func(ctx context.Context) {
		defer r.lane.release(t)
		r.settleAttempt(ctx, a, a.deliver(ctx), stored)
	})
}

// store keeps a delivery to be stored when routing ends. Each delivery gets
// its own headers: publishing adds its ID.
func (r *routed) store(subject string, stored storedEvent, idx int, id deliveryID) {
	r.stored = append(r.stored, &nats.Msg{Subject: subject, Header: stored.storedHeaders(0), Data: stored.data})
	r.ids = append(r.ids, "route:"+id.String())
	r.matched = append(r.matched, idx)
}

// settleAttempt stores the delivery of a first attempt that left something
// to do, then counts the attempt as ended.
func (r *routed) settleAttempt(ctx context.Context, a *attempt, v verdict, stored storedEvent) {
	defer r.done()
	prior, delay := a.n, v.delay
	switch v.next {
	case nextNothing:
		return
	case nextRelease:
		if ctx.Err() != nil {
			r.released.Store(true)
			return
		}
		// Draining: store it for the dispatch stage after the restart,
		// this attempt not counted.
		prior, delay = a.n-1, 0
	}
	out := &nats.Msg{Subject: r.src.names.Subject(StageSend, a.t.token), Header: stored.storedHeaders(2), Data: stored.data}
	out.Header[headerAttempts] = []string{strconv.Itoa(prior)}
	out.Header[headerNotBefore] = []string{strconv.FormatInt(time.Now().Add(delay).UnixNano(), 10)}
	fresh := []bool{false}
	if err := r.p.pub.PublishAll(ctx, []*nats.Msg{out}, []string{"route:" + a.id.String()}, fresh); err != nil {
		if ctx.Err() != nil {
			r.released.Store(true)
			return
		}
		r.p.log.Warn("could not store a delivery to retry; routing the event again later", a.logAttrs("error", err)...)
		r.failed.Store(true)
		return
	}
	if fresh[0] {
		a.t.account.Accepted.Inc()
	}
}

// finish stores the deliveries routing kept, and settles the message once
// the first attempts end too.
func (r *routed) finish(ctx context.Context) {
	if len(r.stored) > 0 {
		fresh := make([]bool, len(r.stored))
		err := r.p.pub.PublishAll(ctx, r.stored, r.ids, fresh)
		countStored(r.src, r.matched, fresh)
		if err != nil {
			r.p.log.Warn("could not store the deliveries of an event; routing it again later",
				r.src.kind.String(), r.src.obj.Key(), "deliveries", len(r.stored), "error", err)
			r.failed.Store(true)
		}
	}
	if r.pending.Load() > 1 {
		r.stopClaim = keepClaim(r.msg, r.budget, r.p.ackWait)
	}
	r.done()
}

func (r *routed) done() {
	if r.pending.Add(-1) != 0 {
		return
	}
	if r.stopClaim != nil {
		r.stopClaim()
	}
	switch {
	case r.released.Load():
		r.p.settle(r.msg, release)
	case r.failed.Load():
		r.p.settle(r.msg, releaseAfter(routeRetryDelay))
	default:
		r.p.settle(r.msg, finished)
	}
}

// countStored counts as accepted the deliveries JetStream stored for the
// first time; a message it discarded as a duplicate of one stored before (a
// route retried after a partial failure) was counted then.
func countStored(src *Source, matched []int, fresh []bool) {
	for i, idx := range matched {
		if fresh[i] {
			src.targets[idx].account.Accepted.Inc()
		}
	}
}
