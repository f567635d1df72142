package pipeline

import (
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// Settling.
//
// Every message a stage pulls is settled exactly once, by settle, with the
// verdict of its handling:
//
//	verdict          JetStream        what becomes of the message
//	done             Ack              its work is over: routed, delivered, dead-lettered, dropped, moved
//	retryAfter(d)    NakWithDelay(d)  a delivery is attempted again after the backoff (Nak when d ≤ 0)
//	release          Nak              handed back at once, no attempt counted: shutting down, or no plan for it
//	releaseAfter(d)  NakWithDelay(d)  handed back later: what it had to store could not be stored
//	terminate        Term             never delivered again: it holds nothing that can be read
//
// Retries therefore live in JetStream: a Nak'ed message comes back after
// its delay with NumDelivered one higher, which is the attempt number.
// Dead-lettering is not a verdict: the dispatch stage stores the event on
// the dead subject and the message is done (see attempt.deliver).

// next says what is left to do after a message was handled.
type next int

const (
	// nextNothing: the delivery ended (delivered, dead-lettered, dropped;
	// counted), or it was handed to its dead-letter stage, or the message
	// was routed or moved. Ack.
	nextNothing next = iota
	// nextRetry: attempt again after the delay. Nak.
	nextRetry
	// nextRelease: hand the message back, after the delay, without
	// counting an attempt: shutting down, or what it had to store could not
	// be stored. Nak.
	nextRelease
	// nextTerminate: the message cannot be read; it is never delivered
	// again. Term.
	nextTerminate
)

// verdict is what the handling of a message, or an attempt, leaves to
// settle.
type verdict struct {
	next  next
	delay time.Duration
}

var (
	finished  = verdict{}
	release   = verdict{next: nextRelease}
	terminate = verdict{next: nextTerminate}
)

func retryAfter(d time.Duration) verdict   { return verdict{next: nextRetry, delay: d} }
func releaseAfter(d time.Duration) verdict { return verdict{next: nextRelease, delay: d} }

// settle tells JetStream the verdict on msg, and logs what cannot be told:
// the message then comes back after AckWait.
func (p *Processor) settle(msg jetstream.Msg, v verdict) {
	var err error
	var what string
	switch v.next {
	case nextNothing:
		err, what = msg.Ack(), "acknowledge"
	case nextRetry:
		err, what = nakAfter(msg, v.delay), "schedule a retry for"
	case nextRelease:
		err, what = nakAfter(msg, v.delay), "release"
	case nextTerminate:
		err, what = msg.Term(), "terminate"
	}
	if err != nil {
		p.log.Warn("could not "+what+" a message; it will be redelivered", "subject", msg.Subject(), "error", err)
	}
}

func nakAfter(msg jetstream.Msg, d time.Duration) error {
	if d <= 0 {
		return msg.Nak()
	}
	return msg.NakWithDelay(d)
}
