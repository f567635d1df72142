package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// ackPublisher publishes messages to JetStream and calls back with the
// outcome of each, from the one goroutine that receives acknowledgements:
// nothing waits per message, and an acknowledgement is read without the
// reflection of a generic JSON decoder. Every callback is called exactly
// once, with an error when no acknowledgement came before the deadline. A
// publish that finds no stream to take it (as while a cluster elects a
// stream leader) is tried again every noResponderRetry until the deadline.
type ackPublisher struct {
	nc     *nats.Conn
	prefix string
	sub    *nats.Subscription
	// timeout bounds PublishAll.
	timeout time.Duration

	mu      sync.Mutex
	next    uint64
	pending map[uint64]*pendingAck
}

type pendingAck struct {
	msg      *nats.Msg
	deadline time.Time
	done     func(err error, duplicate bool)
	timer    *time.Timer
}

// noResponderRetry is how long a publish that no stream took waits before
// it is sent again.
const noResponderRetry = 250 * time.Millisecond

// errPublishTimeout is the outcome of a store JetStream did not acknowledge
// in time.
var errPublishTimeout = errors.New("no acknowledgement from JetStream within the publish timeout")

func newAckPublisher(nc *nats.Conn, timeout time.Duration) (*ackPublisher, error) {
	p := &ackPublisher{nc: nc, prefix: nc.NewInbox() + ".", timeout: timeout, pending: map[uint64]*pendingAck{}}
	sub, err := nc.Subscribe(p.prefix+"*", p.onAck)
	if err != nil {
		return nil, fmt.Errorf("subscribing to acknowledgements: %w", err)
	}
	// An acknowledgement dropped as from a slow consumer would turn a stored
	// event into a 503.
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		return nil, fmt.Errorf("subscribing to acknowledgements: %w", err)
	}
	p.sub = sub
	return p, nil
}

// Publish sends m, whose Reply it sets, and calls done with the outcome:
// duplicate tells that JetStream discarded the message as a duplicate (by
// message ID) of one it stored before.
func (p *ackPublisher) Publish(m *nats.Msg, deadline time.Time, done func(err error, duplicate bool)) {
	wait := time.Until(deadline)
	if wait <= 0 {
		done(errPublishTimeout, false)
		return
	}
	pa := &pendingAck{msg: m, deadline: deadline, done: done}
	p.mu.Lock()
	p.next++
	id := p.next
	p.pending[id] = pa
	pa.timer = time.AfterFunc(wait, func() {
		if pa := p.take(id); pa != nil {
			pa.done(errPublishTimeout, false)
		}
	})
	p.mu.Unlock()
	m.Reply = p.prefix + strconv.FormatUint(id, 36)
	p.send(id, m)
}

// failPending calls back every publish still waiting for an
// acknowledgement with err. For a store that refuses writes: none of them
// will be acknowledged, and their batches would hold back the next ones
// until the publish timeout. One that was stored after all is answered 503
// and sent again by its client, a duplicate, never a loss.
func (p *ackPublisher) failPending(err error) {
	p.mu.Lock()
	ids := make([]uint64, 0, len(p.pending))
	for id := range p.pending {
		ids = append(ids, id)
	}
	p.mu.Unlock()
	for _, id := range ids {
		if pa := p.take(id); pa != nil {
			pa.done(err, false)
		}
	}
}

// MaxPayload is the largest message the server takes.
func (p *ackPublisher) MaxPayload() int64 { return p.nc.MaxPayload() }

func (p *ackPublisher) send(id uint64, m *nats.Msg) {
	if err := p.nc.PublishMsg(m); err != nil {
		if pa := p.take(id); pa != nil {
			pa.done(err, false)
		}
	}
}

// take removes and returns the publish id, nil when another outcome took
// it first.
func (p *ackPublisher) take(id uint64) *pendingAck {
	p.mu.Lock()
	pa := p.pending[id]
	delete(p.pending, id)
	p.mu.Unlock()
	if pa == nil {
		return nil
	}
	pa.timer.Stop()
	return pa
}

func (p *ackPublisher) onAck(m *nats.Msg) {
	id, err := strconv.ParseUint(m.Subject[len(p.prefix):], 36, 64)
	if err != nil {
		return
	}
	if noResponders(m) {
		p.mu.Lock()
		pa := p.pending[id]
		p.mu.Unlock()
		if pa != nil && time.Until(pa.deadline) > noResponderRetry {
			time.AfterFunc(noResponderRetry, func() { p.send(id, pa.msg) })
			return
		}
	}
	if pa := p.take(id); pa != nil {
		duplicate, err := ackOf(m)
		pa.done(err, duplicate)
	}
}

// noResponders tells whether m says that nothing took the message: no
// stream for its subject, or none with a leader yet.
func noResponders(m *nats.Msg) bool {
	return len(m.Data) == 0 && m.Header.Get("Status") == "503"
}

// ackOf reads JetStream's answer to a publish.
func ackOf(m *nats.Msg) (duplicate bool, err error) {
	if err := ackError(m); err != nil {
		return false, err
	}
	return bytes.Contains(m.Data, []byte(`"duplicate":true`)), nil
}

// ackError reads JetStream's answer to a publish: nil for an
// acknowledgement ({"stream":...,"seq":...}), else the error it reports.
func ackError(m *nats.Msg) error {
	if len(m.Data) == 0 {
		// A status message without a body: 503 when no stream takes the
		// subject.
		if status := m.Header.Get("Status"); status != "" {
			return fmt.Errorf("publishing to JetStream: status %s %s", status, m.Header.Get("Description"))
		}
		return errors.New("publishing to JetStream: empty acknowledgement")
	}
	if !bytes.Contains(m.Data, []byte(`"error"`)) {
		return nil
	}
	var resp struct {
		Error *struct {
			Code        int    `json:"code"`
			ErrCode     int    `json:"err_code"`
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(m.Data, &resp); err != nil {
		return fmt.Errorf("publishing to JetStream: unreadable acknowledgement: %w", err)
	}
	if resp.Error == nil {
		return nil
	}
	return &publishError{Status: resp.Error.Code, Code: jetstream.ErrorCode(resp.Error.ErrCode), Description: resp.Error.Description}
}

// publishError is JetStream's refusal of a publish, as its answer says it.
type publishError struct {
	Status      int
	Code        jetstream.ErrorCode
	Description string
}

func (e *publishError) Error() string {
	return fmt.Sprintf("publishing to JetStream: %s (code %d, error %d)", e.Description, e.Status, e.Code)
}

// errStreamFull matches, with errors.Is, the refusal of a stream that
// discards new messages and is at its bytes or messages limit.
var errStreamFull = errors.New("the stream is at its limit")

// jsStoreFailed is the error code of every message JetStream did not
// store (JSStreamStoreFailedF); only its description, the server's own
// error, says why.
const jsStoreFailed jetstream.ErrorCode = 10077

// Is makes errors.Is(err, errStreamFull) tell a full stream from the other
// failures to store, by the server's errors for the limits.
func (e *publishError) Is(target error) bool {
	return target == errStreamFull && e.Code == jsStoreFailed &&
		(e.Description == server.ErrMaxBytes.Error() || e.Description == server.ErrMaxMsgs.Error())
}

// PublishAll publishes msgs and waits until JetStream stored all of them,
// for at most the publish timeout; it also sets fresh[i], when fresh is not
// nil, to whether msgs[i] was stored now rather than discarded as a
// duplicate of a message stored before with the same ID. The messages are
// published together, each with its ID.
func (p *ackPublisher) PublishAll(ctx context.Context, msgs []*nats.Msg, ids []string, fresh []bool) error {
	deadline := time.Now().Add(p.timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	type outcome struct {
		i         int
		err       error
		duplicate bool
	}
	// Every publish has an outcome by the deadline; the buffer takes those
	// that come after this returns.
	outcomes := make(chan outcome, len(msgs))
	for i, m := range msgs {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		m.Header[jetstream.MsgIDHeader] = []string{ids[i]}
		p.Publish(m, deadline, func(err error, duplicate bool) { outcomes <- outcome{i, err, duplicate} })
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
