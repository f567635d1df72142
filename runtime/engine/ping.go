package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/runtime/pipeline"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
	"github.com/knc-dev/knc/runtime/resolve"
)

// PingSources.
//
// Every replica fires every tick. An event whose sink is a Broker or
// Channel of the table is stored in its ingress stream, as its ingress
// stores what it accepts, with the event's id as JetStream message ID:
// the replicas' copies of one tick are one message, which the Broker's
// Triggers (the Channel's Subscriptions) then deliver with their delivery
// options. An event for any other sink is sent over HTTP with the retries
// of Knative's adapter, by the one replica that first claims its id in a
// key-value bucket.

// pingStoreFor bounds how long a replica tries to store one tick's event.
// A tick is fired at most ping.DefaultMaxLateness late, so that the last
// try falls within the duplicate window of the first.
const pingStoreFor = duplicateWindow - ping.DefaultMaxLateness - 5*time.Second

// pingClaimBucket holds the ids of the ticks sent directly; entries expire
// long after any replica could still fire their tick.
const (
	pingClaimBucket = "knc_ping_ticks"
	pingClaimTTL    = 10 * time.Minute
)

// Knative's adapter retries a send 5 times, 50ms apart and doubling.
const (
	pingSendRetries = 5
	pingSendBackoff = 50 * time.Millisecond
)

// errPingNoSink is the outcome of a tick whose sink is not there now.
var errPingNoSink = errors.New("the sink is not resolved")

// startPing starts firing the PingSources of the current plan.
func (e *Engine) startPing() {
	e.pinger = ping.New(ping.Config{
		Clock:       e.opts.PingClock,
		Fire:        e.firePing,
		Log:         e.log,
		MaxLateness: ping.DefaultMaxLateness,
		Missed: func(ps *routing.PingSource, _ time.Time) {
			e.metrics.PingTick(ps.Source, metrics.PingMissed)
		},
	})
	e.updatePing(e.currentPlan().Table())
}

// updatePing fires t's PingSources from now on; those that cannot be
// fired are reported in their status.
func (e *Engine) updatePing(t *routing.Table) {
	problems := e.pinger.Update(t.PingSources)
	e.statusMu.Lock()
	e.pingProblems = problems
	e.statusMu.Unlock()
	for key, err := range problems {
		e.log.Error("not firing a PingSource", "pingsource", key, "error", err)
	}
}

// pingStatus reports whether PingSource o is fired.
func (e *Engine) pingStatus(o routing.Source) (ready bool, reason, message string) {
	if e.stopped {
		return false, "ShuttingDown", "the runtime is shutting down"
	}
	if err := e.pingProblems[o.Key()]; err != nil {
		return false, "InvalidSchedule", err.Error()
	}
	if e.pinger != nil && e.pinger.Running(o.Key()) {
		return true, "", ""
	}
	return false, "", ""
}

// firePing stores the event of one tick, trying again until pingStoreFor
// has passed.
func (e *Engine) firePing(ctx context.Context, ps *routing.PingSource, tick time.Time, ev *event.Event) {
	log := e.log.With("pingsource", ps.Key(), "tick", tick, "id", ev.ID())
	deadline := time.Now().Add(pingStoreFor)
	backoff := 100 * time.Millisecond
	for {
		err := e.storePing(ctx, ps, ev, deadline)
		if err == nil {
			return
		}
		if errors.Is(err, errPingNoSink) || ctx.Err() != nil || time.Now().Add(backoff).After(deadline) {
			log.Error("a PingSource's tick is lost: its event could not be stored or sent", "error", err)
			e.metrics.PingTick(ps.Source, metrics.PingLost)
			return
		}
		log.Warn("could not store a PingSource's event; trying again", "error", err, "in", backoff)
		select {
		case <-ctx.Done():
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 2*time.Second)
	}
}

func (e *Engine) storePing(ctx context.Context, ps *routing.PingSource, ev *event.Event, deadline time.Time) error {
	p := e.currentPlan()
	if ps.SinkPath == "" {
		return e.sendPing(ctx, p, ps, ev)
	}
	src := p.ForPath(ps.SinkPath)
	if src == nil {
		return fmt.Errorf("%w: %s is not served", errPingNoSink, ps.SinkPath)
	}
	c := ev.Clone()
	ev = &c
	if src.Kind() == pipeline.KindBroker {
		// A Broker's ingress gives an event without a TTL the default.
		ev.SetExtension(ingress.ExtensionTTL, e.opts.DefaultTTL)
	}
	// One shard for every replica: JetStream de-duplicates per stream.
	subject, _ := src.Names().IngressShard(0)
	out := cehttp.ToNATS(ev, subject)
	out.Header[ingress.HeaderAccepted] = []string{strconv.FormatInt(time.Now().UnixNano(), 10)}
	pctx, cancel := context.WithDeadline(ctx, deadline)
	defer cancel()
	fresh := []bool{false}
	if err := e.acks.PublishAll(pctx, []*nats.Msg{out}, []string{"ping:" + ev.ID()}, fresh); err != nil {
		return err
	}
	if fresh[0] {
		src.CountAccepted()
		e.metrics.PingTick(ps.Source, metrics.PingStored)
		e.log.Debug("stored a PingSource's event", "pingsource", ps.Key(), "id", ev.ID(), "sink", ps.SinkPath)
	}
	return nil
}

// sendPing sends ev to a sink that is no Broker or Channel of the table,
// from the one replica that claims its tick.
func (e *Engine) sendPing(ctx context.Context, p *pipeline.Plan, ps *routing.PingSource, ev *event.Event) error {
	res, ok := p.Resolved().Lookup(knative.KindPingSource, ps.Source, resolve.FieldSink)
	if !ok || res.Err != nil {
		return fmt.Errorf("%w: %v", errPingNoSink, res.Err)
	}
	claims, err := e.pingClaims(ctx)
	if err != nil {
		return err
	}
	if _, err := claims.Create(ctx, ev.ID(), nil); err != nil {
		if errors.Is(err, jetstream.ErrKeyExists) {
			// Another replica sends this tick.
			return nil
		}
		return fmt.Errorf("claiming the tick: %w", err)
	}
	var r delivery.Result
	for n := 0; ; n++ {
		r = e.pingSender.Send(ctx, ev, res.URL, delivery.Options{Timeout: e.opts.AttemptTimeout})
		if r.Success {
			e.metrics.PingTick(ps.Source, metrics.PingStored)
			return nil
		}
		if !r.Retryable || n == pingSendRetries {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(delivery.Backoff(routing.BackoffExponential, pingSendBackoff, n+1)):
		}
	}
	// The tick is claimed: no other replica sends it. As in Knative, an
	// event its sink refuses is lost.
	e.log.Error("a PingSource's sink refused its event", "pingsource", ps.Key(), "id", ev.ID(), "sink", res.URL, "status", r.StatusCode, "error", r.Err)
	e.metrics.PingTick(ps.Source, metrics.PingLost)
	return nil
}

// pingClaims returns the bucket of claimed ticks, made on first use.
func (e *Engine) pingClaims(ctx context.Context) (jetstream.KeyValue, error) {
	e.pingMu.Lock()
	defer e.pingMu.Unlock()
	if e.pingKV != nil {
		return e.pingKV, nil
	}
	kv, err := e.js.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{
		Bucket:      pingClaimBucket,
		Description: "ticks of PingSources sent directly to their sink",
		TTL:         pingClaimTTL,
		Storage:     jetstream.FileStorage,
		Replicas:    e.opts.StreamReplicas,
	})
	if err != nil {
		return nil, fmt.Errorf("setting up the bucket of PingSource ticks: %w", err)
	}
	e.pingKV = kv
	return kv, nil
}
