package stage

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// trimInterval is how often a trimmer looks for acknowledged messages to
// remove while its stage is busy. Each look costs two JetStream API
// requests and a purge rewrites block state; what waits to be trimmed
// meanwhile is only disk space.
const trimInterval = 500 * time.Millisecond

// trimmer removes from an ingress stream the messages its route consumer
// has acknowledged.
//
// Ingress streams keep their messages after acknowledgement (limits
// retention) because removing them one at a time is the costliest part of
// storing an event: each removal rewrites block state, and a stream that
// becomes empty, as an ingress stream does every time routing catches up,
// has its last block file deleted and a new one created. Purging everything
// below the consumer's acknowledgement floor in one request removes whole
// blocks instead. The route consumer is the stream's only consumer, so the
// floor is exactly what may go.
type trimmer struct {
	stream   string
	consumer jetstream.Consumer
	js       jetstream.JetStream
	log      *slog.Logger
}

// run trims until ctx ends. processed counts the messages the stage has
// settled; nothing is asked of JetStream while it does not move and
// everything delivered is known to be trimmed.
func (t *trimmer) run(ctx context.Context, processed *atomic.Int64) {
	tick := time.NewTicker(trimInterval)
	defer tick.Stop()
	var (
		stream    jetstream.Stream
		seen      int64
		trimmed   uint64
		delivered uint64
	)
	for {
		select {
		case <-tick.C:
		case <-ctx.Done():
			return
		}
		n := processed.Load()
		if n == seen && trimmed >= delivered {
			continue
		}
		seen = n
		info, err := t.consumer.Info(ctx)
		if err != nil {
			if ctx.Err() == nil {
				t.log.Debug("reading the acknowledgement floor failed", "stream", t.stream, "error", err)
			}
			continue
		}
		delivered = info.Delivered.Stream
		floor := info.AckFloor.Stream
		if floor <= trimmed {
			continue
		}
		if stream == nil {
			if stream, err = t.js.Stream(ctx, t.stream); err != nil {
				stream = nil
				continue
			}
		}
		if err := stream.Purge(ctx, jetstream.WithPurgeSequence(floor+1)); err != nil {
			if ctx.Err() == nil {
				t.log.Warn("removing routed events from the ingress stream failed", "stream", t.stream, "error", err)
			}
			continue
		}
		trimmed = floor
	}
}
