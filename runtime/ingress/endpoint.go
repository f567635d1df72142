package ingress

import (
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/runtime/tracing"
)

// HeaderAccepted carries, through every stage, the time (Unix nanoseconds)
// the ingress accepted an event, for the delivery latency histogram.
// cehttp ignores headers that are not CloudEvents attributes.
const HeaderAccepted = "knc-accepted"

// ExtensionTTL is the CloudEvents extension that bounds reply loops.
const ExtensionTTL = "knativebrokerttl"

// Store is where the ingress keeps the events it accepts: JetStream, which
// acknowledges each message it stores.
type Store interface {
	// Publish sends m and calls done exactly once: with a nil error once
	// the message is stored (duplicate when it was discarded as one stored
	// before with the same ID), else with why not, at the latest at
	// deadline.
	Publish(m *nats.Msg, deadline time.Time, done func(err error, duplicate bool))
	// MaxPayload bounds the size of a message.
	MaxPayload() int64
	// Fault returns why the store refuses every write now (its volume is
	// full), nil when it takes them: events are then refused at once
	// instead of waiting for a publish that cannot succeed.
	Fault() error
}

// Endpoint is the ingress of one Broker or Channel as one routing table
// serves it.
type Endpoint struct {
	// kind ("broker" or "channel") and key name it in logs.
	kind, key string
	// path is where it is served, and what its bearer tokens are keyed by.
	path string
	// broker gives events without a knativebrokerttl the default TTL.
	broker   bool
	accepted prometheus.Counter
	// batchers store its events, one per ingress shard.
	batchers []*batcher
	// shard is the shard events go to while it has room.
	shard atomic.Uint32
	// gated is set when its shards store one batch at a time
	// (Config.OneCommitAcrossShards).
	gated bool
	// trace names it in spans; nil when tracing is off.
	trace *tracing.Source
}

// Endpoint returns the endpoint of a Broker (broker) or Channel named key,
// served at path, whose events are stored on the given ingress subjects,
// one per shard, and counted by accepted once answered 202. An endpoint of
// subjects served before keeps their batchers.
func (s *Server) Endpoint(broker bool, key, path string, subjects []string, accepted prometheus.Counter) *Endpoint {
	ep := &Endpoint{kind: "channel", key: key, path: path, broker: broker, accepted: accepted}
	if broker {
		ep.kind = "broker"
	}
	if s.cfg.Tracer != nil {
		ep.trace = tracing.NewSource(broker, key)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var gate *commitGate
	if s.cfg.OneCommitAcrossShards && len(subjects) > 1 {
		for _, subject := range subjects {
			if b := s.batchers[subject]; b != nil && b.gate != nil {
				gate = b.gate
			}
		}
		if gate == nil {
			gate = newCommitGate()
		}
		ep.gated = true
	}
	for _, subject := range subjects {
		b := s.batchers[subject]
		if b == nil {
			b = newBatcher(subject, s.store, s.cfg.PublishTimeout)
			b.gate = gate
			s.batchers[subject] = b
		}
		ep.batchers = append(ep.batchers, b)
	}
	return ep
}

// batcher returns the batcher an event goes to. Shards that take turns
// to commit (gated) gather the next batch on the shard after the one being
// stored. Otherwise it is the current shard's while it can take more
// batches in flight, else the next one that can: filling one shard first
// keeps batches large; the next shards take the overflow when stores are
// slower than events arrive, and their writes run in parallel.
func (ep *Endpoint) batcher() *batcher {
	n := uint32(len(ep.batchers))
	if n == 1 {
		return ep.batchers[0]
	}
	cur := ep.shard.Load()
	if ep.gated {
		// One batch is stored at a time: while the current shard's is,
		// the next batch gathers on the next shard.
		if ep.batchers[cur%n].busy() {
			ep.shard.CompareAndSwap(cur, (cur+1)%n)
			cur = ep.shard.Load()
		}
		return ep.batchers[cur%n]
	}
	for i := range n {
		if b := ep.batchers[(cur+i)%n]; b.hasRoom() {
			if i > 0 {
				ep.shard.CompareAndSwap(cur, (cur+i)%n)
			}
			return b
		}
	}
	return ep.batchers[cur%n]
}

// TTL returns the knativebrokerttl of e, when it has a valid one.
func TTL(e *event.Event) (int32, bool) {
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
