package pipeline

import (
	"context"
	"errors"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
	"github.com/knc-dev/knc/runtime/tracing"
)

// routeRetryDelay is how long an event whose deliveries could not be stored
// waits before it is routed again.
const routeRetryDelay = time.Second

// RouteMsg is the route stage: it evaluates a Broker's Triggers once for an
// event from the ingress stream (a Channel's Subscriptions all match) and
// makes the first attempt of each delivery, or stores it in the delivery
// stream (see direct.go). The ingress message is acknowledged only once
// every delivery ended or is stored; if storing fails, the event is routed
// again later and JetStream discards the deliveries already stored as
// duplicates (by message ID), so that each Trigger is still evaluated into
// one stored delivery at most.
func (p *Processor) RouteMsg(ctx context.Context, id string, msg jetstream.Msg) {
	src := p.currentPlan().byID[id]
	if src == nil {
		// The source was removed by a reload; its pipeline is stopping.
		p.settle(msg, release)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		p.settle(msg, release)
		return
	}
	if len(src.targets) == 0 {
		// Nothing to evaluate: no need to read the event.
		p.settle(msg, finished)
		return
	}
	if cehttp.IsBatch(msg.Headers()) {
		p.routeBatch(ctx, src, msg, meta)
		return
	}
	ev, err := eventOf(msg)
	if err != nil {
		p.log.Error("dropping a stored message that holds no valid event", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.Drop(metrics.DropUnreadable)
		p.settle(msg, terminate)
		return
	}
	r := p.newRouted(src, msg, meta)
	stored := storedEvent{header: msg.Headers(), data: msg.Data(), accepted: acceptedOf(msg.Headers()), passThrough: msg.Headers().Get(cehttp.NATSPassThrough), index: -1}
	var buf [8]int
	r.route(ev, stored, buf[:0])
	r.finish(ctx)
}

// routeBatch routes the events of a batch message as RouteMsg routes one:
// the message is acknowledged once the deliveries of all its events ended
// or are stored. A delivery's message ID names the event by its place in the
// batch, so that routing the batch again stores nothing twice. An event
// that cannot be read is dropped alone.
func (p *Processor) routeBatch(ctx context.Context, src *Source, msg jetstream.Msg, meta *jetstream.MsgMetadata) {
	if err := cehttp.CheckBatch(msg.Headers()); err != nil {
		p.log.Error("dropping a stored batch this version cannot read", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "error", err)
		src.metrics.Drop(metrics.DropUnreadable)
		p.settle(msg, terminate)
		return
	}
	r := p.newRouted(src, msg, meta)
	var buf [8]int
	rest := msg.Data()
	for i := 0; len(rest) > 0; i++ {
		ev, extras, next, err := cehttp.RecordEvent(rest, msg.Subject(), cehttp.RecordExtras{ingress.HeaderAccepted, cehttp.NATSPassThrough})
		if errors.Is(err, cehttp.ErrCorruptRecord) {
			p.log.Error("dropping the rest of a stored batch that cannot be read", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "event", i, "error", err)
			src.metrics.Drop(metrics.DropUnreadable)
			break
		}
		record := rest[:len(rest)-len(next)]
		rest = next
		if err != nil {
			p.log.Error("dropping a stored event that is not valid", src.kind.String(), src.obj.Key(), "subject", msg.Subject(), "event", i, "error", err)
			src.metrics.Drop(metrics.DropUnreadable)
			continue
		}
		stored := storedEvent{record: record, data: ev.DataEncoded, accepted: extras[0], passThrough: extras[1], index: i}
		r.route(ev, stored, buf[:0])
	}
	r.finish(ctx)
}

// route routes one event to every target it matches, within the span of
// routing it when tracing is on. buf is room for the matches.
func (r *routed) route(ev *event.Event, stored storedEvent, buf []int) {
	var span tracing.Span
	if r.p.tracer != nil {
		stored.trace, span = r.p.startRoute(r.src, ev, stored.passThrough)
	}
	matched := r.src.match(ev, buf)
	if obs := r.p.matched; obs != nil {
		for _, idx := range matched {
			t := r.src.targets[idx]
			obs.Matched(t.kind, t.obj.Namespace, t.obj.Name, ev)
		}
	}
	if len(matched) > 1 {
		stored.encoded = r.src.shareEncoding(ev, matched)
	}
	for _, idx := range matched {
		r.add(ev, stored, idx)
	}
	span.EndRoute(len(matched))
}

// shareEncoding encodes ev once for the deliveries of its fan-out: the
// headers and body of a request depend on the event, its format and the
// extension the target leaves out, not on the target's URL. It encodes
// for the first target; a target that wants another format or extension
// encodes the event itself. Nil when the event cannot be encoded: each
// attempt then reports why.
func (s *Source) shareEncoding(ev *event.Event, matched []int) *delivery.Encoded {
	t := s.targets[matched[0]]
	enc, err := delivery.Encode(ev, t.format(), t.omittedExtension())
	if err != nil {
		return nil
	}
	return enc
}

// match returns the indexes in s.targets of the targets ev goes to, in
// dst: the matching Triggers of a Broker, every Subscription of a Channel.
func (s *Source) match(ev *event.Event, dst []int) []int {
	if s.matcher != nil {
		return s.matcher.Match(ev, dst)
	}
	for i := range s.targets {
		dst = append(dst, i)
	}
	return dst
}

// UnparkMsg moves a held delivery of a target that has become ready back to
// its active stage.
func (p *Processor) UnparkMsg(ctx context.Context, id string, msg jetstream.Msg) {
	src := p.currentPlan().byID[id]
	if src == nil {
		p.settle(msg, release)
		return
	}
	meta, err := msg.Metadata()
	if err != nil {
		p.settle(msg, release)
		return
	}
	hold, tok, ok := src.names.ParseSubject(msg.Subject())
	if !ok {
		p.settle(msg, terminate)
		return
	}
	if t := src.byToken[tok]; t != nil && !t.ready {
		// A reload made it unready again after this message was handed
		// out; the next unpark consumer will not see it until it is ready.
		p.settle(msg, releaseAfter(p.ackWait))
		return
	}
	// Deliveries of deleted targets move too; the dispatch stage drops
	// and counts them.
	out := forward(msg, src.names.Subject(activeStage(hold), tok))
	if err := p.pub.PublishAll(ctx, []*nats.Msg{out}, []string{msgID("unpark", msg, meta, "")}, nil); err != nil {
		p.settle(msg, releaseAfter(routeRetryDelay))
		return
	}
	p.settle(msg, finished)
}
