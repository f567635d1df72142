package stage

import (
	"context"
	"sync"
	"sync/atomic"
)

// Pool runs items on workers that are started as the queue needs them, up
// to limit, and kept: a goroutine per item would grow its stack again for
// every item. Whoever submits bounds the items in the pool to limit (the
// stages and lanes hold a slot per item), so that submitting never blocks.
type Pool[T any] struct {
	// work is the context of processing: the workers' contexts end with it.
	work    context.Context
	queue   chan T
	limit   int32
	run     func(context.Context, T)
	idle    atomic.Int32
	spawned atomic.Int32
	running sync.WaitGroup
}

// NewPool returns a pool whose workers run items with contexts that end
// with work, which must outlive the pool: the engine's, never a message's
// or a stage's, since a worker serves whoever submits next.
func NewPool[T any](work context.Context, limit int, run func(context.Context, T)) *Pool[T] {
	return &Pool[T]{work: work, queue: make(chan T, limit), limit: int32(limit), run: run}
}

// Submit has a worker run item.
func (p *Pool[T]) Submit(item T) {
	p.running.Add(1)
	p.queue <- item
	// Read the queue before the idle workers: a worker counted idle takes
	// an item, so only a queue longer than that needs one more.
	if queued := len(p.queue); queued > int(p.idle.Load()) && p.spawned.Load() < p.limit {
		if p.spawned.Add(1) <= p.limit {
			go p.worker()
		} else {
			p.spawned.Add(-1)
		}
	}
}

// worker runs items with a context of its own, so that what the items
// derive from it (timeouts) registers with it rather than all with work:
// one context shared by every worker makes them queue for its lock.
func (p *Pool[T]) worker() {
	ctx, cancel := context.WithCancel(p.work)
	defer cancel()
	for {
		p.idle.Add(1)
		item, ok := <-p.queue
		p.idle.Add(-1)
		if !ok {
			return
		}
		p.run(ctx, item)
		p.running.Done()
	}
}

// Close ends the workers once the queue is empty; nothing may be submitted
// after it.
func (p *Pool[T]) Close() { close(p.queue) }

// Wait waits for the items submitted to end, or for ctx to end.
func (p *Pool[T]) Wait(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		p.running.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
