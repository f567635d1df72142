package engine

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/pipeline"

	"github.com/knc-dev/knc/runtime/natsserver"
)

// ExternalNATS points the engine at a NATS cluster it does not run. Several
// engines serving the same table may share one: each Broker's and Channel's
// streams and consumers are shared JetStream durables, so the replicas
// split the work and any of them accepts any event.
type ExternalNATS struct {
	// URL is the server URL, or several separated by commas, nats:// or
	// tls://. Empty means the embedded server.
	URL string
	// CredsFile is a NATS credentials file (a user JWT and its NKey seed).
	CredsFile string
	// User and Password authenticate with a user name; Token with a token.
	User, Password string
	Token          string
	// RootCAFile holds the certificates of the CA that signed the servers'
	// certificates, for tls:// URLs signed by a private CA.
	RootCAFile string
}

// setupAttempt bounds each JetStream API request made while setting up
// streams and consumers on a cluster. A cluster that has no metadata leader
// (it is starting, or electing one after losing a node) does not answer
// such requests at all, so each is bounded and retried.
const setupAttempt = 5 * time.Second

// clustered reports whether JetStream may be a cluster: external, or the
// embedded server as one node of one.
func (o *Options) clustered() bool { return o.NATS.URL != "" || o.Cluster != nil }

// connectNATS starts the embedded server, or connects to the external one,
// and opens e.nc and e.js.
func (e *Engine) connectNATS() error {
	if e.opts.NATS.URL != "" {
		nc, err := nats.Connect(e.opts.NATS.URL, e.externalOptions()...)
		if err != nil {
			return fmt.Errorf("engine: connecting to NATS at %s: %w", redactURL(e.opts.NATS.URL), err)
		}
		e.nc = nc
	} else {
		var err error
		e.server, err = natsserver.Start(natsserver.Options{
			StoreDir:      filepath.Join(e.opts.DataDir, "jetstream"),
			MaxStoreBytes: e.opts.MaxStoreBytes,
			MaxPayload:    maxPayload(e.opts.MaxBodyBytes),
			ListenAddr:    e.opts.NATSAddr,
			SyncAlways:    e.opts.Durability == DurabilityFsync,
			Cluster:       e.opts.Cluster,
			Logger:        e.log,
			OnStoreFault:  e.storeFaultChanged,
		})
		if err != nil {
			return err
		}
		e.nc, err = e.server.Connect("knc-engine")
		if err != nil {
			return err
		}
	}
	js, err := jetstream.New(e.nc)
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	e.js = js
	return nil
}

func (e *Engine) externalOptions() []nats.Option {
	x := e.opts.NATS
	opts := []nats.Option{
		nats.Name("knc-engine"),
		// The cluster may start after the runtime, and lose the node the
		// runtime is connected to: keep trying, forever. Publishes made
		// meanwhile fail, and the ingress answers 503.
		nats.RetryOnFailedConnect(true),
		nats.MaxReconnects(-1),
		nats.ReconnectWait(250 * time.Millisecond),
		nats.ReconnectJitter(100*time.Millisecond, time.Second),
		nats.DisconnectErrHandler(func(_ *nats.Conn, err error) {
			if err != nil {
				e.log.Warn("disconnected from NATS; reconnecting", "error", err)
			}
		}),
		nats.ReconnectHandler(func(nc *nats.Conn) {
			e.log.Info("reconnected to NATS", "server", nc.ConnectedUrlRedacted())
		}),
	}
	if x.CredsFile != "" {
		opts = append(opts, nats.UserCredentials(x.CredsFile))
	}
	if x.User != "" {
		opts = append(opts, nats.UserInfo(x.User, x.Password))
	}
	if x.Token != "" {
		opts = append(opts, nats.Token(x.Token))
	}
	if x.RootCAFile != "" {
		opts = append(opts, nats.RootCAs(x.RootCAFile))
	}
	return opts
}

// notReady returns why the engine does not take events, nil when it does
// (GET /readyz).
func (e *Engine) notReady() error {
	if !e.ready.Load() {
		return errors.New("the routes are not set up: the runtime is starting or shutting down")
	}
	if !e.natsConnected() {
		return errors.New("not connected to NATS")
	}
	return e.storeFault()
}

// storeFault returns why the embedded JetStream refuses writes, nil when
// it takes them (or is not embedded).
func (e *Engine) storeFault() error {
	if e.server == nil {
		return nil
	}
	if err := e.server.StoreFault(); err != nil {
		return fmt.Errorf("the store refuses writes: %w", err)
	}
	return nil
}

// storeFaultChanged is told when the embedded JetStream starts refusing
// writes, and when it takes them again.
func (e *Engine) storeFaultChanged(err error) {
	if err != nil {
		e.log.Error("the store refuses writes: events are answered 503 until the volume has room again", "error", err)
	} else {
		e.log.Info("the store takes writes again")
	}
	// Not on the server's goroutine that reported it, which may hold
	// locks of its own while Start or Shutdown waits for the server.
	go func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if !e.started || e.stopped {
			return
		}
		if err != nil && e.acks != nil {
			e.acks.failPending(fmt.Errorf("the store refuses writes: %w", err))
		}
		if err == nil {
			// JetStream was restarted. What was sent to the one before
			// will never be acknowledged, and would hold back the batches
			// after it until the publish timeout; and it forgot the pull
			// requests the stages had outstanding.
			if e.acks != nil {
				e.acks.failPending(errors.New("JetStream was restarted before it acknowledged the store"))
			}
			for _, pl := range e.served {
				for _, s := range pl.stages() {
					s.Repull()
				}
			}
		}
		e.refreshStatus()
		if e.opts.StatusChanged != nil {
			e.opts.StatusChanged()
		}
	}()
}

// natsConnected reports whether the NATS connection can carry requests.
func (e *Engine) natsConnected() bool {
	return e.nc != nil && e.nc.IsConnected()
}

// setUp runs a setup step (streams and consumers of one source), retrying
// it on a cluster until ctx ends: a cluster answers nothing while it elects
// a metadata leader, and two replicas starting together may race to create
// the same consumer. The steps are idempotent.
func (e *Engine) setUp(ctx context.Context, what string, step func(ctx context.Context) error) error {
	if !e.opts.clustered() {
		return step(ctx)
	}
	wait := 100 * time.Millisecond
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(ctx, setupAttempt)
		err := step(actx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%w (after %d attempts: %w)", err, attempt, ctx.Err())
		}
		e.log.Warn("setting up JetStream failed; retrying", "what", what, "attempt", attempt, "error", err)
		select {
		case <-time.After(wait):
		case <-ctx.Done():
		}
		wait = min(2*wait, 2*time.Second)
	}
}

// setUpSource is newSourceStages, retried on a cluster.
func (e *Engine) setUpSource(ctx context.Context, src *pipeline.Source) (*sourceStages, error) {
	var pl *sourceStages
	err := e.setUp(ctx, src.Kind().String()+" "+src.Object().Key(), func(ctx context.Context) error {
		var err error
		pl, err = e.newSourceStages(ctx, src)
		return err
	})
	return pl, err
}

// unparkConsumer returns the unpark consumer of src's delivery stream with
// filter, or nil when filter is empty.
//
// The consumer is named after its filter (unparkName). A work-queue stream
// allows no two consumers with overlapping filters, so the unpark
// consumers of other filters are deleted first; a new filter gets a new
// consumer, which starts from the first held message (an updated consumer
// would skip the held messages older than its position). Replicas serving
// the same table therefore share one consumer, and never delete and
// create a consumer of the same name at the same time: JetStream can be
// left unable to create a consumer whose deletion raced with its
// creation.
func (e *Engine) unparkConsumer(ctx context.Context, stream string, filter []string) (jetstream.Consumer, error) {
	name := unparkName(filter)
	s, err := e.js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("reading stream %s: %w", stream, err)
	}
	names := s.ConsumerNames(ctx)
	var stale []string
	for n := range names.Name() {
		if strings.HasPrefix(n, consumerUnpark) && n != name {
			stale = append(stale, n)
		}
	}
	if err := names.Err(); err != nil {
		return nil, fmt.Errorf("listing the consumers of %s: %w", stream, err)
	}
	for _, n := range stale {
		if err := e.js.DeleteConsumer(ctx, stream, n); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return nil, fmt.Errorf("removing consumer %s of %s: %w", n, stream, err)
		}
	}
	if len(filter) == 0 {
		return nil, nil
	}
	c, err := e.js.CreateOrUpdateConsumer(ctx, stream, e.consumerConfig(name, filter, e.opts.MaxAckPending))
	if err != nil {
		return nil, fmt.Errorf("setting up consumer %s of %s: %w", name, stream, err)
	}
	return c, nil
}

// unparkName names the unpark consumer of a filter.
func unparkName(filter []string) string {
	if len(filter) == 0 {
		return ""
	}
	sum := sha256.Sum256([]byte(strings.Join(filter, " ")))
	return consumerUnpark + "-" + hex.EncodeToString(sum[:6])
}

// redactURL removes user information from NATS URLs for logs.
func redactURL(urls string) string {
	parts := strings.Split(urls, ",")
	for i, p := range parts {
		if at := strings.LastIndex(p, "@"); at >= 0 {
			if scheme := strings.Index(p, "://"); scheme >= 0 && scheme < at {
				parts[i] = p[:scheme+3] + "***" + p[at:]
			}
		}
	}
	return strings.Join(parts, ",")
}
