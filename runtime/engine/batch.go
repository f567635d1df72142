package engine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/runtime/cehttp"
)

// Ingress group commit.
//
// Storing a message costs JetStream far more than anything else an ingress
// does: parsing it, writing it to the block file, acknowledging it, then
// delivering it to the route stage and processing that acknowledgement.
// Events that arrive while a store is in flight therefore wait for it to
// finish and are then stored together, as one batch message (see
// cehttp.AppendRecord), and each is answered 202 once that batch is
// acknowledged. A lone event is stored at once, alone; under load, batches
// grow with the number of requests in flight, so the cost of a store is
// shared by more events exactly when it matters.

// batchesInFlight is how many batches of one ingress may wait for their
// acknowledgement at once. One makes the largest batches; a second one
// keeps JetStream busy while an acknowledgement travels back.
const batchesInFlight = 2

// maxBatchBytes bounds a batch; an event larger than that is a batch of its
// own. Larger batches save little more.
const maxBatchBytes = 256 << 10

// batchHeader marks batch messages.
var batchHeader = nats.Header{cehttp.HeaderBatch: {cehttp.BatchVersion}}

// batch is a group of events stored in one message.
type batch struct {
	data    []byte
	created time.Time
	// done is closed once err tells the outcome of the store.
	done chan struct{}
	err  error
}

// batcher groups the events of one ingress subject into batches.
type batcher struct {
	subject string
	pub     *ackPublisher
	timeout time.Duration

	mu       sync.Mutex
	open     *batch   // taking events
	sealed   []*batch // full, waiting for their turn
	inFlight int
}

func newBatcher(subject string, pub *ackPublisher, timeout time.Duration) *batcher {
	return &batcher{subject: subject, pub: pub, timeout: timeout}
}

// add puts one record (see cehttp.AppendEventRecord) in the next batch and
// returns that batch; its done channel closes once it is stored, or failed
// to be, within the publish timeout of now.
func (b *batcher) add(record []byte) *batch {
	limit := min(maxBatchBytes, int(b.pub.nc.MaxPayload())/2)
	b.mu.Lock()
	if b.open != nil && len(b.open.data)+len(record) > limit {
		b.sealed = append(b.sealed, b.open)
		b.open = nil
	}
	if b.open == nil {
		b.open = &batch{data: make([]byte, 0, max(len(record), 4<<10)), created: time.Now(), done: make(chan struct{})}
	}
	bt := b.open
	bt.data = append(bt.data, record...)
	send := b.takeSendable(nil)
	b.mu.Unlock()
	for _, s := range send {
		b.publish(s)
	}
	return bt
}

// hasRoom tells whether an event added now would be stored at once,
// without waiting for a batch in flight.
func (b *batcher) hasRoom() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight < batchesInFlight
}

// takeSendable moves batches to the publisher while fewer than
// batchesInFlight wait for an acknowledgement: sealed ones first, in order.
func (b *batcher) takeSendable(send []*batch) []*batch {
	for b.inFlight < batchesInFlight {
		var s *batch
		switch {
		case len(b.sealed) > 0:
			s = b.sealed[0]
			b.sealed[0] = nil
			b.sealed = b.sealed[1:]
		case b.open != nil:
			s, b.open = b.open, nil
		default:
			return send
		}
		b.inFlight++
		send = append(send, s)
	}
	return send
}

func (b *batcher) publish(bt *batch) {
	b.pub.publish(&nats.Msg{Subject: b.subject, Header: batchHeader, Data: bt.data}, bt.created.Add(b.timeout), func(a ackOutcome) {
		b.complete(bt, a.err)
	})
}

func (b *batcher) complete(bt *batch, err error) {
	bt.err = err
	bt.data = nil
	close(bt.done)
	b.mu.Lock()
	b.inFlight--
	send := b.takeSendable(nil)
	b.mu.Unlock()
	for _, s := range send {
		b.publish(s)
	}
}

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

	mu      sync.Mutex
	next    uint64
	pending map[uint64]*pendingAck
}

// ackOutcome is what JetStream answered to a publish.
type ackOutcome struct {
	err error
	// duplicate tells that JetStream discarded the message as a duplicate
	// (by message ID) of one it stored before.
	duplicate bool
}

type pendingAck struct {
	msg      *nats.Msg
	deadline time.Time
	done     func(ackOutcome)
	timer    *time.Timer
}

// noResponderRetry is how long a publish that no stream took waits before
// it is sent again.
const noResponderRetry = 250 * time.Millisecond

// errPublishTimeout is the outcome of a store JetStream did not acknowledge
// in time.
var errPublishTimeout = errors.New("no acknowledgement from JetStream within the publish timeout")

func newAckPublisher(nc *nats.Conn) (*ackPublisher, error) {
	p := &ackPublisher{nc: nc, prefix: nc.NewInbox() + ".", pending: map[uint64]*pendingAck{}}
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

// publish sends m, whose Reply it sets, and calls done with the outcome.
func (p *ackPublisher) publish(m *nats.Msg, deadline time.Time, done func(ackOutcome)) {
	wait := time.Until(deadline)
	if wait <= 0 {
		done(ackOutcome{err: errPublishTimeout})
		return
	}
	pa := &pendingAck{msg: m, deadline: deadline, done: done}
	p.mu.Lock()
	p.next++
	id := p.next
	p.pending[id] = pa
	pa.timer = time.AfterFunc(wait, func() {
		if pa := p.take(id); pa != nil {
			pa.done(ackOutcome{err: errPublishTimeout})
		}
	})
	p.mu.Unlock()
	m.Reply = p.prefix + strconv.FormatUint(id, 36)
	p.send(id, m)
}

func (p *ackPublisher) send(id uint64, m *nats.Msg) {
	if err := p.nc.PublishMsg(m); err != nil {
		if pa := p.take(id); pa != nil {
			pa.done(ackOutcome{err: err})
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
		pa.done(ackOf(m))
	}
}

// noResponders tells whether m says that nothing took the message: no
// stream for its subject, or none with a leader yet.
func noResponders(m *nats.Msg) bool {
	return len(m.Data) == 0 && m.Header.Get("Status") == "503"
}

// ackOf reads JetStream's answer to a publish.
func ackOf(m *nats.Msg) ackOutcome {
	if err := ackError(m); err != nil {
		return ackOutcome{err: err}
	}
	return ackOutcome{duplicate: bytes.Contains(m.Data, []byte(`"duplicate":true`))}
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
	return fmt.Errorf("publishing to JetStream: %s (code %d, error %d)", resp.Error.Description, resp.Error.Code, resp.Error.ErrCode)
}

// recordBuffers hold records while they are encoded, before they are copied
// into a batch.
var recordBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledRecord bounds the buffers kept for reuse: the buffer of a large
// event is left to the garbage collector.
const maxPooledRecord = 64 << 10

// store adds e, accepted at the given time, to the next batch of b and
// returns that batch.
func (b *batcher) store(e *event.Event, accepted time.Time) (*batch, error) {
	buf := recordBuffers.Get().(*[]byte)
	var stamp [20]byte
	rec, err := cehttp.AppendEventRecord((*buf)[:0], e, headerAccepted, string(strconv.AppendInt(stamp[:0], accepted.UnixNano(), 10)))
	if err != nil {
		recordBuffers.Put(buf)
		return nil, err
	}
	bt := b.add(rec)
	if cap(rec) <= maxPooledRecord {
		*buf = rec[:0]
		recordBuffers.Put(buf)
	}
	return bt, nil
}
