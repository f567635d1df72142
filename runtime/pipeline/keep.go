package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// Kept letters.
//
// A delivery that ends without success (no dead-letter sink, or the sink
// refused it too), and a copy of one the sink accepted when its target asks
// for it, is stored as a kept letter in its namespace's stream
// (package runtime/kept) rather than dropped: the event as its subscriber
// got it, its pass-through headers, where it was going and why it failed.
// knc dlq lists and replays them. The letter is stored with a message ID
// made from the delivery's, so that trying again stores it once; failing
// to store it retries the delivery, as failing to store a dead letter
// does. Without a Keeper, such deliveries are dropped and counted.

// keep ends the delivery as a kept letter: reason is the outcome (a
// kept.Reason*, which is the drop reason when there is no Keeper),
// failedURL and r the attempt that failed, why what the log says.
func (a *attempt) keep(ctx context.Context, reason, failedURL string, r delivery.Result, why string) verdict {
	if a.p.keeper == nil {
		a.p.log.Warn("dropping an event that could not be delivered: "+why, a.logAttrs(resultAttrs(failedURL, r)...)...)
		a.drop(reason)
		return finished
	}
	fresh, err := a.storeLetter(ctx, a.ev, "kept:", reason, failedURL, r)
	if err != nil {
		return a.notKept(ctx, reason, err)
	}
	if fresh {
		a.countAccept()
		a.countKept(reason)
	}
	a.p.log.Warn("kept an event that could not be delivered: "+why+"; see knc dlq list", a.logAttrs(append(resultAttrs(failedURL, r), "reason", reason)...)...)
	return finished
}

// keepCopy stores a copy of an event the dead-letter sink accepted, for a
// target that asks for one (knc.dev/keep-dead-lettered). The delivery's
// outcome stays dead-lettered, which its caller counts; the copy is
// counted kept with reason dead-lettered, outside the outcomes (see
// metrics/accounting.go). A copy that cannot be stored makes the
// dead-letter attempt again: the sink may then see the event twice.
func (a *attempt) keepCopy(ctx context.Context) verdict {
	fresh, err := a.storeLetter(ctx, a.ev, "kept:", kept.ReasonDeadLettered, "", delivery.Result{})
	if err != nil {
		return a.notKept(ctx, kept.ReasonDeadLettered, err)
	}
	if fresh {
		a.countKept(kept.ReasonDeadLettered)
	}
	return finished
}

// errTTL says why a reply was kept rather than routed.
var errTTL = errors.New("the reply's TTL (knativebrokerttl) is exhausted, which usually means a reply loop")

// keepReply stores a Trigger's reply that would exceed its TTL as a kept
// letter of the Trigger, reason ttl. The delivery was delivered, which its
// caller counts; the letter is counted kept, outside the outcomes. Without
// a Keeper the reply is dropped and counted for the Broker, as before
// letters were kept.
func (a *attempt) keepReply(ctx context.Context, reply *event.Event) error {
	if a.p.keeper == nil {
		a.p.log.Info("dropping a reply: "+errTTL.Error(), a.logAttrs("reply", reply.ID())...)
		a.src.metrics.Drop(kept.ReasonTTL)
		return nil
	}
	fresh, err := a.storeLetter(ctx, reply, "kept-reply:", kept.ReasonTTL, "", delivery.Result{Err: errTTL})
	if err != nil {
		return fmt.Errorf("keeping a reply whose TTL is exhausted: %w", err)
	}
	if fresh {
		a.countKept(kept.ReasonTTL)
	}
	a.p.log.Warn("kept a reply instead of routing it: "+errTTL.Error()+"; see knc dlq list", a.logAttrs("reply", reply.ID(), "reason", kept.ReasonTTL)...)
	return nil
}

// errUnrouted says why a delivery of a deleted target was kept.
var errUnrouted = errors.New("its Trigger or Subscription was deleted by a reload while the delivery was pending")

// keepUnrouted ends a stored delivery of a target the current plan does
// not serve any more (a.t is a goneTarget, or the old plan's): kept, reason
// unrouted. The delivery was counted accepted when it was stored.
func (a *attempt) keepUnrouted(ctx context.Context) verdict {
	return a.keep(ctx, kept.ReasonUnrouted, "", delivery.Result{Err: errUnrouted}, errUnrouted.Error())
}

// KeepDeleted keeps m, a delivery held for target t of src (stored in
// stream at seq), which a reload deleted, as a kept letter with reason
// unrouted; a message that holds no event is counted dropped, unreadable.
// It returns an error when the letter could not be stored: m must then
// stay where it is.
func (p *Processor) KeepDeleted(ctx context.Context, src *Source, t *Target, m *nats.Msg, stream string, seq uint64) error {
	ev, err := cehttp.FromNATS(m)
	if err != nil {
		p.log.Error("dropping a held delivery that holds no valid event", src.kind.String(), src.obj.Key(), "subject", m.Subject, "error", err)
		src.metrics.Drop(metrics.DropUnreadable)
		t.account.Drop(metrics.DropUnreadable)
		return nil
	}
	a := &attempt{p: p, src: src, t: t, ev: ev, accepted: acceptedOf(m.Header), passThrough: m.Header.Get(cehttp.NATSPassThrough),
		id: deliveryID{stream: stream, seq: seq, event: -1, token: t.token}}
	if v := a.keepUnrouted(ctx); v != finished {
		return fmt.Errorf("could not keep a held delivery of deleted %s %s", strings.ToLower(t.kind), t.obj.Key())
	}
	return nil
}

func (a *attempt) countKept(reason string) {
	a.src.metrics.Keep(reason)
	a.t.account.Keep(reason)
}

// notKept is the verdict on a delivery whose letter could not be stored:
// tried again later.
func (a *attempt) notKept(ctx context.Context, reason string, err error) verdict {
	if ctx.Err() != nil {
		return release
	}
	a.p.log.Warn("could not store a kept letter; retrying the delivery later", a.logAttrs("reason", reason, "error", err)...)
	return retryAfter(routeRetryDelay)
}

// storeLetter stores ev as a kept letter of the attempt's target with a
// message ID made from idPrefix and the delivery's, so that trying again
// stores it once; fresh says it was stored now.
func (a *attempt) storeLetter(ctx context.Context, ev *event.Event, idPrefix, reason, failedURL string, r delivery.Result) (fresh bool, err error) {
	return a.p.keeper.Keep(ctx, a.src.obj.Namespace, a.letter(ev, reason, failedURL, r), idPrefix+a.id.String())
}

// letter is the kept letter of ev, the attempt's event or its reply.
func (a *attempt) letter(ev *event.Event, reason, failedURL string, r delivery.Result) *nats.Msg {
	// An event of the dead stage carries the knativeerror* extensions its
	// sink was to see; the letter holds the event without them, and them
	// in its headers. Otherwise they are what a sink would have seen.
	failed := ev
	if _, ok := ev.Extensions()[delivery.ExtensionErrorCode]; !ok && failedURL != "" {
		failed = delivery.DeadLetter(ev, failedURL, r)
	} else if ok {
		ev = withoutErrorExtensions(ev)
	}
	ext := failed.Extensions()
	f := kept.Failure{
		Reason:   reason,
		Status:   r.StatusCode,
		Attempts: a.n,
	}
	if failedURL != "" {
		f.Destination = redact.URI(failedURL)
	}
	if v, ok := ext[delivery.ExtensionErrorDest]; ok && failedURL == "" {
		// A letter of the dead stage: what failed is the delivery that
		// handed the event to the sink.
		f.Destination = redact.URI(extensionString(v))
		if f.Status == 0 {
			f.Status, _ = strconv.Atoi(extensionString(ext[delivery.ExtensionErrorCode]))
		}
	}
	if r.Err != nil {
		f.Error = redact.Text(r.Err.Error())
	}
	if v, ok := ext[delivery.ExtensionErrorDest]; ok {
		f.ErrorDest = redact.URI(extensionString(v))
	}
	if v, ok := ext[delivery.ExtensionErrorCode]; ok {
		f.ErrorCode = extensionString(v)
	}
	if v, ok := ext[delivery.ExtensionErrorData]; ok {
		f.ErrorData = extensionString(v)
	}
	m := cehttp.ToNATS(ev, kept.Subject(a.src.obj.Namespace, a.src.names.ID, a.t.token))
	if a.accepted != "" {
		m.Header[ingress.HeaderAccepted] = []string{a.accepted}
	}
	if a.passThrough != "" {
		m.Header[cehttp.NATSPassThrough] = []string{a.passThrough}
	}
	kept.Stamp(m, kept.Destination{
		SourceKind:  a.src.kind.String(),
		Source:      a.src.obj.Key(),
		SourceID:    a.src.names.ID,
		TargetKind:  a.t.kind,
		Target:      a.t.obj.Name,
		TargetToken: a.t.token,
	}, f, time.Now())
	return m
}

// extensionString is the canonical string of an extension's value: a
// URI-reference, such as knativeerrordest, as it is written, not as Go
// prints its struct.
func extensionString(v any) string {
	s, err := types.Format(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return s
}

// withoutErrorExtensions returns a copy of ev without the knativeerror*
// extensions.
func withoutErrorExtensions(ev *event.Event) *event.Event {
	c := ev.Clone()
	for _, name := range []string{delivery.ExtensionErrorDest, delivery.ExtensionErrorCode, delivery.ExtensionErrorData} {
		_ = c.Context.SetExtension(name, nil)
	}
	return &c
}
