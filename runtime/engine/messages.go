package engine

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/cehttp"
)

// headerAccepted carries, through every stage, the time (Unix nanoseconds)
// the ingress accepted an event, for the delivery latency histogram.
// cehttp ignores headers that are not CloudEvents attributes.
const headerAccepted = "knc-accepted"

// ExtensionTTL is the CloudEvents extension that bounds reply loops.
const ExtensionTTL = "knativebrokerttl"

// cloneHeader copies h without the headers JetStream set when it was
// stored, with room for extra more.
func cloneHeader(h nats.Header, extra int) nats.Header {
	c := make(nats.Header, len(h)+extra)
	for k, v := range h {
		if !strings.HasPrefix(k, "Nats-") {
			c[k] = v
		}
	}
	return c
}

// forward copies msg to subject: the same event, byte for byte, with the
// headers JetStream set for the original removed.
func forward(msg jetstream.Msg, subject string) *nats.Msg {
	return &nats.Msg{Subject: subject, Header: cloneHeader(msg.Headers(), 1), Data: msg.Data()}
}

// eventOf reads the event stored in msg.
func eventOf(msg jetstream.Msg) (*event.Event, error) {
	return cehttp.FromNATS(&nats.Msg{Subject: msg.Subject(), Header: msg.Headers(), Data: msg.Data()})
}

func stamp(m *nats.Msg, accepted time.Time) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	m.Header[headerAccepted] = []string{strconv.FormatInt(accepted.UnixNano(), 10)}
}

// acceptedOf returns the first knc-accepted value of h, "" without one.
func acceptedOf(h nats.Header) string {
	if v := h[headerAccepted]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// acceptedAt reads a knc-accepted value.
func acceptedAt(v string) (time.Time, bool) {
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return time.Time{}, false
	}
	return time.Unix(0, n), true
}

// ttlOf returns the knativebrokerttl of e, when it has a valid one.
func ttlOf(e *event.Event) (int32, bool) {
	var v any
	var ok bool
	if ec, isV1 := e.Context.(*event.EventContextV1); isV1 {
		// Event.Extensions copies the map.
		v, ok = ec.Extensions[ExtensionTTL]
	} else {
		v, ok = e.Extensions()[ExtensionTTL]
	}
	if !ok {
		return 0, false
	}
	n, err := types.ToInteger(v)
	if err != nil {
		return 0, false
	}
	return n, true
}

// msgID names a message published because of msg, for deduplication.
func msgID(kind string, msg jetstream.Msg, meta *jetstream.MsgMetadata, suffix string) string {
	return fmt.Sprintf("%s:%s:%d:%s", kind, meta.Stream, meta.Sequence.Stream, suffix)
}

// publishAll publishes msgs and waits until JetStream stored all of them.
func (e *Engine) publishAll(ctx context.Context, msgs []*nats.Msg, ids []string) error {
	return e.publishFresh(ctx, msgs, ids, nil)
}

// publishFresh is publishAll that also sets fresh[i], when fresh is not nil,
// to whether msgs[i] was stored now rather than discarded as a duplicate of
// a message stored before with the same ID. The messages are published
// together, each with its ID, and their acknowledgements awaited, for at
// most PublishTimeout.
func (e *Engine) publishFresh(ctx context.Context, msgs []*nats.Msg, ids []string, fresh []bool) error {
	deadline := time.Now().Add(e.opts.PublishTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	type outcome struct {
		i int
		ackOutcome
	}
	// Every publish has an outcome by the deadline; the buffer takes those
	// that come after this returns.
	outcomes := make(chan outcome, len(msgs))
	for i, m := range msgs {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		m.Header[jetstream.MsgIDHeader] = []string{ids[i]}
		e.acks.publish(m, deadline, func(a ackOutcome) { outcomes <- outcome{i, a} })
	}
	// After a failure the other acknowledgements are still awaited: a
	// message stored now is a duplicate when published again, so fresh
	// must say it was stored this time.
	var failed error
	for range msgs {
		select {
		case o := <-outcomes:
			if o.err != nil {
				if failed == nil {
					failed = fmt.Errorf("publishing to %s: %w", msgs[o.i].Subject, o.err)
				}
				continue
			}
			if fresh != nil {
				fresh[o.i] = !o.duplicate
			}
		case <-ctx.Done():
			if failed == nil {
				failed = fmt.Errorf("publishing: %w", ctx.Err())
			}
			return failed
		}
	}
	return failed
}

// settle acknowledges or rejects a message, logging what cannot be told to
// JetStream: the message then comes back after AckWait.
func (e *Engine) settle(err error, what string, msg jetstream.Msg) {
	if err != nil {
		e.log.Warn("could not "+what+" a message; it will be redelivered", "subject", msg.Subject(), "error", err)
	}
}

func nakAfter(msg jetstream.Msg, d time.Duration) error {
	if d <= 0 {
		return msg.Nak()
	}
	return msg.NakWithDelay(d)
}
