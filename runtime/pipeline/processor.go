package pipeline

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/tracing"
)

// Publisher stores messages in JetStream, each with its message ID, and
// waits until all are stored or the publish timeout passes. fresh, when
// not nil, is set to whether each message was stored now rather than
// discarded as a duplicate of one stored before with the same ID.
type Publisher interface {
	PublishAll(ctx context.Context, msgs []*nats.Msg, ids []string, fresh []bool) error
}

// Sender makes one HTTP attempt to deliver an event; delivery.Sender is
// one.
type Sender interface {
	Send(ctx context.Context, ev *event.Event, url string, o delivery.Options) delivery.Result
}

// Keeper stores kept letters: the deliveries that ended without success
// (package runtime/kept).
type Keeper interface {
	// Keep stores m, a letter of namespace, with the message ID id, and
	// tells whether it was stored now rather than discarded as a duplicate
	// of one stored before with the same ID.
	Keep(ctx context.Context, namespace string, m *nats.Msg, id string) (fresh bool, err error)
}

// Processor handles the messages the route, dispatch and unpark stages
// pull: it routes events, makes delivery attempts and settles each
// message. It reads the plan and the accepting flag the Engine owns,
// reaches JetStream and subscribers only through the interfaces above, and
// counts with the metrics bound to the plan's sources and targets.
type Processor struct {
	plan *atomic.Pointer[Plan]
	// accepting is false while the engine starts or drains: a failed
	// attempt is then released rather than counted.
	accepting *atomic.Bool
	pub       Publisher
	send      Sender
	// keeper is nil when failed deliveries are dropped, not kept.
	keeper Keeper
	log    *slog.Logger
	// tracer is nil when tracing is off: nothing is prepared for spans.
	tracer *tracing.Tracer
	// matched is nil unless something watches the events routed.
	matched MatchObserver

	ackWait        time.Duration
	attemptTimeout time.Duration
	defaultTTL     int32
}

func (p *Processor) currentPlan() *Plan { return p.plan.Load() }

// MatchObserver is told of the events routed, for the live page's recent
// events (runtime/ui). Matched runs on the routing path: it must return
// quickly and must not keep ev. An event routed again after a restart is
// told again.
type MatchObserver interface {
	// Matched says that ev matched the Trigger or Subscription (kind)
	// namespace/name.
	Matched(kind, namespace, name string, ev *event.Event)
}

// ProcessorConfig is what a Processor reads and reaches.
type ProcessorConfig struct {
	// Plan is the plan current when each message starts.
	Plan *atomic.Pointer[Plan]
	// Accepting is false while the engine starts or drains: a failed
	// attempt is then released rather than counted.
	Accepting *atomic.Bool
	Publisher Publisher
	Sender    Sender
	// Keeper stores what could not be delivered; nil drops it.
	Keeper Keeper
	Log    *slog.Logger
	// Tracer is nil when tracing is off.
	Tracer *tracing.Tracer
	// Matched, when set, is told of each event a Trigger or Subscription
	// matches; nil costs nothing.
	Matched MatchObserver

	AckWait        time.Duration
	AttemptTimeout time.Duration
	DefaultTTL     int32
}

// NewProcessor returns a Processor; the plan it reads may be nil until
// the first message arrives.
func NewProcessor(c ProcessorConfig) *Processor {
	return &Processor{
		plan:           c.Plan,
		accepting:      c.Accepting,
		pub:            c.Publisher,
		send:           c.Sender,
		keeper:         c.Keeper,
		log:            c.Log,
		tracer:         c.Tracer,
		matched:        c.Matched,
		ackWait:        c.AckWait,
		attemptTimeout: c.AttemptTimeout,
		defaultTTL:     c.DefaultTTL,
	}
}
