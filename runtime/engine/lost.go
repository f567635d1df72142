package engine

import (
	"context"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/pipeline"
)

// countLostMessages counts, as dropped with reason unreadable, the
// messages of each source's streams that JetStream could not read back
// from its files as it started. A damaged block is cut at its first bad
// record, and the messages after it are gone; JetStream reports them only
// sometimes (StreamState.Lost), and otherwise as deleted, as if they had
// been acknowledged. Without this an accepted event in such a block would
// vanish from the accounting.
//
// A message is acknowledged only after its consumer had it, so a missing
// message no consumer has been handed yet is lost for certain. Of those a
// consumer has been handed, the ones it still waits for are lost when the
// stream no longer holds them. Every message of a stream is waiting for
// exactly one of its consumers (delivery filters do not overlap, and
// acknowledged messages of an ingress stream stay only until trimmed).
// Two cases make the count a lower bound: acknowledged ingress messages
// not trimmed yet can hide a loss of as many, and a missing message one
// consumer skipped (another's subject) while its own consumer had not got
// that far is taken as acknowledged. A lost ingress message counts as one,
// though it may hold a batch of events. A consumer's state can also be
// behind its stream after the process was killed (acknowledged messages
// still counted as waited for), so only the streams JetStream found a
// damaged block in, and cut, are counted. It runs once, at Start, before
// any consumer moves.
func (e *Engine) countLostMessages(ctx context.Context, p *pipeline.Plan) {
	if e.server == nil {
		return
	}
	damaged := e.server.DamagedStreams()
	if len(damaged) == 0 {
		return
	}
	for _, src := range p.Sources() {
		streams := []string{src.Names().OutStream}
		for i := range e.opts.IngressShards {
			_, stream := src.Names().IngressShard(i)
			streams = append(streams, stream)
		}
		for _, name := range streams {
			if !damaged[name] {
				continue
			}
			e.log.Warn("JetStream found a damaged block in a stream's files and cut it", "stream", name)
			n, err := e.lostIn(ctx, name)
			if err != nil {
				e.log.Warn("checking a stream for messages lost from its files failed", "stream", name, "error", err)
				continue
			}
			if n == 0 {
				continue
			}
			src.DropUnreadable(int(n))
			e.log.Error("JetStream could not read back messages from its files (a damaged block); counted as dropped, reason unreadable",
				src.Kind().String(), src.Object().Key(), "stream", name, "messages", n)
		}
	}
}

// lostIn returns how many messages of stream name are gone though a
// consumer still waits for them, or that JetStream reports lost if more.
func (e *Engine) lostIn(ctx context.Context, name string) (uint64, error) {
	s, err := e.js.Stream(ctx, name)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx, jetstream.WithDeletedDetails(true))
	if err != nil {
		return 0, err
	}
	state := info.State
	// Messages handed to a consumer and not acknowledged, plus those
	// after its position that the stream still holds.
	var waited, furthest uint64
	names := s.ConsumerNames(ctx)
	for cn := range names.Name() {
		c, err := s.Consumer(ctx, cn)
		if err != nil {
			return 0, err
		}
		ci := c.CachedInfo()
		waited += uint64(ci.NumAckPending) + ci.NumPending
		furthest = max(furthest, ci.Delivered.Stream)
	}
	if err := names.Err(); err != nil {
		return 0, err
	}
	var lost uint64
	if waited > state.Msgs {
		lost = waited - state.Msgs
	}
	lost += missingAfter(state, furthest)
	if state.Lost != nil {
		lost = max(lost, uint64(len(state.Lost.Msgs)))
	}
	return lost, nil
}

// missingAfter counts the sequences after seq, up to the stream's last,
// that the stream no longer holds.
func missingAfter(state jetstream.StreamState, seq uint64) uint64 {
	if state.LastSeq <= seq {
		return 0
	}
	var missing uint64
	if state.FirstSeq > seq+1 {
		// Everything before the first held message is gone.
		missing = min(state.FirstSeq, state.LastSeq+1) - (seq + 1)
	}
	for _, d := range state.Deleted {
		if d > seq && d >= state.FirstSeq && d <= state.LastSeq {
			missing++
		}
	}
	return missing
}
