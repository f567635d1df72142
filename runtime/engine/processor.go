package engine

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

// publisher stores messages in JetStream, each with its message ID, and
// waits until all are stored or the publish timeout passes. fresh, when
// not nil, is set to whether each message was stored now rather than
// discarded as a duplicate of one stored before with the same ID.
type publisher interface {
	publishAll(ctx context.Context, msgs []*nats.Msg, ids []string, fresh []bool) error
}

// sender makes one HTTP attempt to deliver an event; delivery.Sender is
// one.
type sender interface {
	Send(ctx context.Context, ev *event.Event, url string, o delivery.Options) delivery.Result
}

// accounts names the accounting of a target that is not in the current
// plan, one a reload deleted; accounting is one.
type accounts interface {
	forToken(src *source, token string) *targetAccount
}

// processor handles the messages the route, dispatch and unpark stages
// pull: it routes events, makes delivery attempts and settles each
// message. It reads the plan and the accepting flag the Engine owns, and
// reaches JetStream, subscribers and metrics only through the interfaces
// above.
type processor struct {
	plan *atomic.Pointer[plan]
	// accepting is false while the engine starts or drains: a failed
	// attempt is then released rather than counted.
	accepting *atomic.Bool
	pub       publisher
	send      sender
	accounts  accounts
	log       *slog.Logger
	// tracer is nil when tracing is off: nothing is prepared for spans.
	tracer *tracing.Tracer

	ackWait        time.Duration
	attemptTimeout time.Duration
	defaultTTL     int32
}

func (p *processor) currentPlan() *plan { return p.plan.Load() }
