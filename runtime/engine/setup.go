package engine

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/pipeline"
	"github.com/knc-dev/knc/runtime/stage"
)

// Consumer names; each stream has its own namespace of consumers.
const (
	consumerRoute    = "route"
	consumerDispatch = "dispatch"
	consumerUnpark   = "unpark"
)

// duplicateWindow is how long JetStream remembers message IDs. A stage that
// publishes and then fails to acknowledge what it consumed publishes again
// when the message comes back; within this window the second publish is
// discarded instead of becoming a second delivery.
const duplicateWindow = 30 * time.Second

// sourceStages is the running data plane of one Broker or Channel: the route
// stages read its ingress streams, the dispatch stage the active subjects of
// its delivery stream, and the unpark stage the held events of targets that
// have become ready.
type sourceStages struct {
	id string
	// routes read the ingress streams, one per shard.
	routes   []*stage.Stage
	dispatch *stage.Stage
	unpark   *stage.Stage
	// holdFilter is the unpark consumer's current filter.
	holdFilter []string
}

func (p *sourceStages) stages() []*stage.Stage {
	out := slices.Clone(p.routes)
	for _, s := range []*stage.Stage{p.dispatch, p.unpark} {
		if s != nil {
			out = append(out, s)
		}
	}
	return out
}

// ingressShare caps each ingress stream when the store is capped, so that
// ingress streams together fill at most half of it. Without a cap, a full
// store refuses the delivery messages the route stage writes; the ingress
// messages it cannot route then never leave, and nothing moves again.
func ingressShare(maxStoreBytes int64, sources int) int64 {
	if maxStoreBytes <= 0 || sources == 0 {
		return -1
	}
	return max(maxStoreBytes/int64(2*sources), 1)
}

// ensureStreams creates or updates the streams of src and returns the
// shard numbers of its ingress streams: the IngressShards it stores events
// in, and any other that a runtime started with more shards left, which is
// still routed so that no event stays behind.
//
// The delivery stream is a work queue: a message is removed once consumed
// and acknowledged, so its size is the backlog. An ingress stream keeps
// acknowledged messages until its trimmer removes them in bulk (see
// trimmer), shortly after. An ingress stream created as a work queue by an
// earlier version stays one: JetStream cannot change that retention, and
// trimming it is harmless. Discarding new messages when full (rather than
// old ones) makes a full store refuse what it cannot keep instead of losing
// what it kept.
func (e *Engine) ensureStreams(ctx context.Context, src *pipeline.Source) ([]int, error) {
	common := jetstream.StreamConfig{
		Retention:  jetstream.WorkQueuePolicy,
		Storage:    jetstream.FileStorage,
		Discard:    jetstream.DiscardNew,
		Duplicates: duplicateWindow,
		Replicas:   e.opts.StreamReplicas,
		MaxMsgs:    -1,
		MaxBytes:   -1,
		MaxAge:     0,
	}
	shards := e.opts.IngressShards
	var configs []jetstream.StreamConfig
	for i := range shards {
		subject, name := src.Names().IngressShard(i)
		in := common
		in.Retention = jetstream.LimitsPolicy
		if prev, err := e.js.Stream(ctx, name); err == nil && prev.CachedInfo().Config.Retention == jetstream.WorkQueuePolicy {
			in.Retention = jetstream.WorkQueuePolicy
		}
		in.MaxBytes = e.ingressMaxBytes
		if in.MaxBytes > 0 {
			in.MaxBytes = max(in.MaxBytes/int64(shards), 1)
		}
		in.Name = name
		in.Description = fmt.Sprintf("ingress of %s %s", src.Kind(), src.Object().Key())
		if i > 0 {
			in.Description += fmt.Sprintf(", shard %d of %d", i, shards)
		}
		in.Subjects = []string{subject}
		configs = append(configs, in)
	}
	out := common
	out.Name = src.Names().OutStream
	out.Description = fmt.Sprintf("deliveries of %s %s", src.Kind(), src.Object().Key())
	out.Subjects = src.Names().OutSubjects()
	configs = append(configs, out)
	for _, cfg := range configs {
		if err := ensureStream(ctx, e.js, cfg); err != nil {
			return nil, fmt.Errorf("setting up stream %s: %w", cfg.Name, err)
		}
	}
	all := make([]int, shards)
	for i := range all {
		all[i] = i
	}
	names := e.js.StreamNames(ctx, jetstream.WithStreamListSubject(src.Names().In+".*"))
	for name := range names.Name() {
		if i := src.Names().ShardOf(name); i >= shards {
			all = append(all, i)
		}
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("listing the ingress streams of %s %s: %w", src.Kind(), src.Object().Key(), err)
	}
	return all, nil
}

// ensureStream creates the stream of cfg, or updates it when one of the
// settings knc chooses differs. An update of an unchanged stream is not
// sent: replicas starting or reloading together would otherwise rewrite
// the stream's metadata at once while each creates its consumers, and
// every reload would write it again for nothing.
func ensureStream(ctx context.Context, js jetstream.JetStream, cfg jetstream.StreamConfig) error {
	if s, err := js.Stream(ctx, cfg.Name); err == nil && sameStreamSettings(s.CachedInfo().Config, cfg) {
		return nil
	}
	_, err := js.CreateOrUpdateStream(ctx, cfg)
	return err
}

// sameStreamSettings reports whether have, a stream's configuration as
// the server holds it (with its defaults filled in), has every setting
// that knc chooses in want.
func sameStreamSettings(have, want jetstream.StreamConfig) bool {
	return have.Name == want.Name &&
		have.Description == want.Description &&
		slices.Equal(have.Subjects, want.Subjects) &&
		have.Retention == want.Retention &&
		have.Storage == want.Storage &&
		have.Discard == want.Discard &&
		have.Duplicates == want.Duplicates &&
		max(have.Replicas, 1) == max(want.Replicas, 1) &&
		have.MaxMsgs == want.MaxMsgs &&
		have.MaxBytes == want.MaxBytes &&
		have.MaxAge == want.MaxAge
}

func (e *Engine) consumerConfig(name string, filters []string, maxAckPending int) jetstream.ConsumerConfig {
	return jetstream.ConsumerConfig{
		Durable:        name,
		AckPolicy:      jetstream.AckExplicitPolicy,
		AckWait:        e.opts.AckWait,
		DeliverPolicy:  jetstream.DeliverAllPolicy,
		FilterSubjects: filters,
		// Retries are counted by the stages from NumDelivered; JetStream
		// itself never gives up on a message.
		MaxDeliver:    -1,
		MaxAckPending: maxAckPending,
	}
}

// newSourceStages sets up the streams and the route and dispatch consumers of
// src and returns its stages, not yet started.
func (e *Engine) newSourceStages(ctx context.Context, src *pipeline.Source) (*sourceStages, error) {
	shards, err := e.ensureStreams(ctx, src)
	if err != nil {
		return nil, err
	}
	id := src.Names().ID
	log := e.log.With(src.Kind().String(), src.Object().Key())
	p := &sourceStages{id: id}
	for _, i := range shards {
		subject, stream := src.Names().IngressShard(i)
		route, err := e.js.CreateOrUpdateConsumer(ctx, stream,
			// Messages being routed, and those waiting for their first
			// attempts, of which the lane has at most DeliveryConcurrency.
			e.consumerConfig(consumerRoute, []string{subject}, 4*e.opts.RouteConcurrency+e.opts.DeliveryConcurrency))
		if err != nil {
			return nil, fmt.Errorf("setting up consumer %s of %s: %w", consumerRoute, stream, err)
		}
		p.routes = append(p.routes, e.routeStage(id, stream, route, log))
	}
	dispatch, err := e.js.CreateOrUpdateConsumer(ctx, src.Names().OutStream,
		e.consumerConfig(consumerDispatch, []string{src.Names().Prefix + pipeline.StageSend + ".*", src.Names().Prefix + pipeline.StageDead + ".*"}, e.opts.MaxAckPending))
	if err != nil {
		return nil, fmt.Errorf("setting up consumer %s of %s: %w", consumerDispatch, src.Names().OutStream, err)
	}
	p.dispatch = stage.New("dispatch", dispatch, e.opts.DeliveryConcurrency, log, func(ctx context.Context, m jetstream.Msg) {
		e.proc.DispatchMsg(ctx, id, m)
	})
	if err := e.updateUnpark(ctx, p, src); err != nil {
		return nil, err
	}
	return p, nil
}

// routeStage returns the route stage of the ingress stream of source id
// that consumer reads, not yet started.
func (e *Engine) routeStage(id, stream string, consumer jetstream.Consumer, log *slog.Logger) *stage.Stage {
	return stage.New("route", consumer, e.opts.RouteConcurrency, log, func(ctx context.Context, m jetstream.Msg) {
		e.proc.RouteMsg(ctx, id, m)
	}).Trimming(stream, consumer, e.js, log)
}

// updateUnpark makes the unpark consumer of p follow the hold subjects of the
// targets of src that are ready. A consumer whose filter changes is
// recreated rather than updated: an updated consumer would skip the held
// messages older than its position.
func (e *Engine) updateUnpark(ctx context.Context, p *sourceStages, src *pipeline.Source) error {
	filter := src.HoldFilter()
	if p.unpark != nil && slices.Equal(filter, p.holdFilter) {
		return nil
	}
	if p.unpark != nil {
		p.unpark.Stop()
		p.unpark = nil
	}
	p.holdFilter = nil
	cons, err := e.unparkConsumer(ctx, src.Names().OutStream, filter)
	if err != nil || cons == nil {
		return err
	}
	id := src.Names().ID
	p.unpark = stage.New("unpark", cons, e.opts.RouteConcurrency, e.log.With(src.Kind().String(), src.Object().Key()), func(ctx context.Context, m jetstream.Msg) {
		e.proc.UnparkMsg(ctx, id, m)
	})
	p.holdFilter = filter
	return nil
}
