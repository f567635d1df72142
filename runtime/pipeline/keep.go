package pipeline

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/kept"
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

// keep ends the delivery as a kept letter: reason is the outcome (a drop
// reason, which it replaces), failedURL and r the attempt that failed, why
// what the log says.
func (a *attempt) keep(ctx context.Context, reason, failedURL string, r delivery.Result, why string) verdict {
	if a.p.keeper == nil {
		a.p.log.Warn("dropping an event that could not be delivered: "+why, a.logAttrs(resultAttrs(failedURL, r)...)...)
		a.drop(reason)
		return finished
	}
	fresh, v := a.storeLetter(ctx, reason, failedURL, r)
	if v != finished {
		return v
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
	fresh, v := a.storeLetter(ctx, kept.ReasonDeadLettered, "", delivery.Result{})
	if v == finished && fresh {
		a.countKept(kept.ReasonDeadLettered)
	}
	return v
}

func (a *attempt) countKept(reason string) {
	a.src.metrics.Keep(reason)
	a.t.account.Keep(reason)
}

// storeLetter stores the attempt's event as a kept letter with a message ID
// made from the delivery's, so that trying again stores it once; fresh
// says it was stored now. A verdict other than finished says what to do
// with the delivery instead.
func (a *attempt) storeLetter(ctx context.Context, reason, failedURL string, r delivery.Result) (fresh bool, v verdict) {
	m := a.letter(reason, failedURL, r)
	fresh, err := a.p.keeper.Keep(ctx, a.src.obj.Namespace, m, "kept:"+a.id.String())
	if err != nil {
		if ctx.Err() != nil {
			return false, release
		}
		a.p.log.Warn("could not store a kept letter; retrying the delivery later", a.logAttrs("reason", reason, "error", err)...)
		return false, retryAfter(routeRetryDelay)
	}
	return fresh, finished
}

// letter is the kept letter of the attempt's event.
func (a *attempt) letter(reason, failedURL string, r delivery.Result) *nats.Msg {
	// An event of the dead stage carries the knativeerror* extensions its
	// sink was to see; the letter holds the event without them, and them
	// in its headers. Otherwise they are what a sink would have seen.
	ev := a.ev
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
