package ingress

import (
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
// acknowledgement at once. One makes the largest batches. A second one
// would keep JetStream busy while an acknowledgement travels back, but
// one stream stores its messages one after the other anyway: measured
// (docs/performance.md), two halved the batches, and cost more CPU per
// event and more time per request, with file and with fsync durability.
const batchesInFlight = 1

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
	to      Store
	timeout time.Duration

	// gate, when set, is shared with the other shards of an endpoint
	// (Config.OneCommitAcrossShards).
	gate *commitGate

	mu sync.Mutex
	// waiting is set while b is in gate's queue; guarded by gate.mu.
	waiting bool
	// limit bounds a batch's bytes, 0 until the first event.
	limit    int
	open     *batch   // taking events
	sealed   []*batch // full, waiting for their turn
	inFlight int
}

func newBatcher(subject string, store Store, timeout time.Duration) *batcher {
	return &batcher{subject: subject, to: store, timeout: timeout}
}

// add puts one record (see cehttp.AppendEventRecord) in the next batch and
// returns that batch; its done channel closes once it is stored, or failed
// to be, within the publish timeout of now.
func (b *batcher) add(record []byte) *batch {
	b.mu.Lock()
	if b.limit == 0 {
		// The server's payload limit is asked once: it takes the
		// connection's lock, which every publish takes too.
		b.limit = min(maxBatchBytes, int(b.to.MaxPayload())/2)
	}
	limit := b.limit
	if b.open != nil && len(b.open.data)+len(record) > limit {
		b.sealed = append(b.sealed, b.open)
		b.open = nil
	}
	if b.open == nil {
		b.open = &batch{data: batchBuffer(len(record)), created: time.Now(), done: make(chan struct{})}
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

// busy tells whether a batch of b waits for its acknowledgement.
func (b *batcher) busy() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inFlight > 0
}

// takeSendable moves batches to the publisher while fewer than
// batchesInFlight wait for an acknowledgement, and the commit gate, if
// any, lets them: sealed ones first, in order.
func (b *batcher) takeSendable(send []*batch) []*batch {
	for b.inFlight < batchesInFlight {
		if len(b.sealed) == 0 && b.open == nil {
			return send
		}
		if b.gate != nil && !b.gate.acquire(b) {
			return send
		}
		var s *batch
		if len(b.sealed) > 0 {
			s = b.sealed[0]
			b.sealed[0] = nil
			b.sealed = b.sealed[1:]
		} else {
			s, b.open = b.open, nil
		}
		b.inFlight++
		send = append(send, s)
	}
	return send
}

// sendWaiting publishes what b can send now.
func (b *batcher) sendWaiting() {
	b.mu.Lock()
	send := b.takeSendable(nil)
	b.mu.Unlock()
	for _, s := range send {
		b.publish(s)
	}
}

// commitGate lets one batch at a time be in flight across the shards of
// an endpoint. With fsync durability every stored message costs an fsync
// of its own stream; shards that each store their own small batches at
// once pay one fsync each, which the disk serves one after the other. Held
// to one, the shards take turns: the next batch gathers every event that
// arrives while one is stored, as a single shard's would, and goes to the
// next shard, so that routing still spreads over all of them.
type commitGate struct {
	mu   sync.Mutex
	free int
	// waiting are the batchers with a batch to send, in the order they
	// asked; each at most once (batcher.waiting).
	waiting []*batcher
}

func newCommitGate() *commitGate { return &commitGate{free: 1} }

// acquire takes the gate for one batch of b, whose lock is held; when it
// is taken, b waits for its turn.
func (g *commitGate) acquire(b *batcher) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.free > 0 {
		g.free--
		return true
	}
	if !b.waiting {
		b.waiting = true
		g.waiting = append(g.waiting, b)
	}
	return false
}

// release gives the gate back and returns the batcher whose turn it is,
// nil when none waits.
func (g *commitGate) release() *batcher {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.free++
	if len(g.waiting) == 0 {
		return nil
	}
	next := g.waiting[0]
	g.waiting[0] = nil
	g.waiting = g.waiting[1:]
	next.waiting = false
	return next
}

func (b *batcher) publish(bt *batch) {
	b.to.Publish(&nats.Msg{Subject: b.subject, Header: batchHeader, Data: bt.data}, bt.created.Add(b.timeout), func(err error, _ bool) {
		b.complete(bt, err)
	})
}

func (b *batcher) complete(bt *batch, err error) {
	bt.err = err
	if err == nil {
		// Acknowledged: the store has sent the bytes for the last time.
		// After a failure (a timeout) a send or a retry may still be
		// reading them, so they are left to the garbage collector.
		releaseBatchBuffer(bt.data)
	}
	bt.data = nil
	close(bt.done)
	b.mu.Lock()
	b.inFlight--
	b.mu.Unlock()
	if b.gate != nil {
		// The shard whose turn it is goes first; then b, whose events
		// gathered while its batch was stored, asks for a turn.
		if next := b.gate.release(); next != nil {
			next.sendWaiting()
		}
	}
	b.sendWaiting()
}

// batchBuffers hold the bytes of batches, from one that was acknowledged to
// the next.
var batchBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// batchBuffer returns an empty buffer for a batch whose first record has n
// bytes.
func batchBuffer(n int) []byte {
	if n > maxBatchBytes {
		return make([]byte, 0, n)
	}
	return (*batchBuffers.Get().(*[]byte))[:0]
}

func releaseBatchBuffer(b []byte) {
	if cap(b) == 0 || cap(b) > 2*maxBatchBytes {
		return
	}
	b = b[:0]
	batchBuffers.Put(&b)
}

// recordBuffers hold records while they are encoded, before they are copied
// into a batch.
var recordBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

// maxPooledRecord bounds the buffers kept for reuse: the buffer of a large
// event is left to the garbage collector.
const maxPooledRecord = 64 << 10

// store adds e, accepted at the given time, to the next batch of b and
// returns that batch.
func (b *batcher) store(e *event.Event, accepted time.Time, passThrough string) (*batch, error) {
	buf := recordBuffers.Get().(*[]byte)
	var stamp [20]byte
	extra := [4]string{HeaderAccepted, string(strconv.AppendInt(stamp[:0], accepted.UnixNano(), 10)), cehttp.NATSPassThrough, passThrough}
	n := 2
	if passThrough != "" {
		n = 4
	}
	rec, err := cehttp.AppendEventRecord((*buf)[:0], e, extra[:n]...)
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
