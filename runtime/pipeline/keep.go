package pipeline

import (
	"context"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
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
// refused it too) is stored as a kept letter in its namespace's stream
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
	m := a.letter(reason, failedURL, r)
	fresh, err := a.p.keeper.Keep(ctx, a.src.obj.Namespace, m, "kept:"+a.id.String())
	if err != nil {
		if ctx.Err() != nil {
			return release
		}
		a.p.log.Warn("could not keep an event that could not be delivered; retrying the delivery later", a.logAttrs("error", err)...)
		return retryAfter(routeRetryDelay)
	}
	if fresh {
		a.countAccept()
		a.src.metrics.Keep(reason)
		a.t.account.Keep(reason)
	}
	a.p.log.Warn("kept an event that could not be delivered: "+why+"; see knc dlq list", a.logAttrs(append(resultAttrs(failedURL, r), "reason", reason)...)...)
	return finished
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
	if r.Err != nil {
		f.Error = redact.Text(r.Err.Error())
	}
	if v, ok := ext[delivery.ExtensionErrorDest]; ok {
		f.ErrorDest = redact.URI(fmt.Sprint(v))
	}
	if v, ok := ext[delivery.ExtensionErrorCode]; ok {
		f.ErrorCode = fmt.Sprint(v)
	}
	if v, ok := ext[delivery.ExtensionErrorData]; ok {
		f.ErrorData = fmt.Sprint(v)
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

// withoutErrorExtensions returns a copy of ev without the knativeerror*
// extensions.
func withoutErrorExtensions(ev *event.Event) *event.Event {
	c := ev.Clone()
	for _, name := range []string{delivery.ExtensionErrorDest, delivery.ExtensionErrorCode, delivery.ExtensionErrorData} {
		_ = c.Context.SetExtension(name, nil)
	}
	return &c
}
