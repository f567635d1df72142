package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/natsserver"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/runtime/pipeline"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/status"
)

// Engine serves a routing table. Create it with New, then Run it, or Start
// and Shutdown it.
type Engine struct {
	opts Options
	// ingressMaxBytes is MaxBytes of the ingress streams set up next.
	ingressMaxBytes int64
	log             *slog.Logger
	metrics         *metrics.Set
	// proc handles the messages the stages pull.
	proc *pipeline.Processor

	// mu serialises Start, Reload and Shutdown, and guards the fields
	// below it.
	mu       sync.Mutex
	started  bool
	stopped  bool
	server   *natsserver.Server
	nc       *nats.Conn
	listener net.Listener
	adminLn  net.Listener
	// served are the stages of every source set up, by Names.ID.
	served map[string]*sourceStages
	// acks calls back the publishers of the ingress, and of the stages,
	// when JetStream acknowledges what they stored.
	acks *ackPublisher
	// ingress serves the HTTP listener.
	ingress *ingress.Server
	// keeper stores kept letters and serves them (kept.go, kept_api.go).
	keeper *keeper
	// lanes make the first attempts of each source's deliveries.
	lanes map[string]*pipeline.Lane
	// work is the context of processing; cancelling it abandons the
	// attempts in progress.
	work       context.Context
	cancelWork context.CancelFunc

	js        jetstream.JetStream
	baseURL   string
	adminURL  string
	plan      atomic.Pointer[pipeline.Plan]
	accepting atomic.Bool
	ready     atomic.Bool
	readyCh   chan struct{}

	// pinger fires the PingSources (ping.go); pingSender sends the events
	// of those whose sink is outside the table, and pingKV holds the ticks
	// claimed for them.
	pinger     *ping.Scheduler
	pingSender *delivery.Sender
	pingMu     sync.Mutex
	pingKV     jetstream.KeyValue

	statusMu sync.Mutex
	statuses []status.Report
	// pingProblems tell why PingSources are not fired, by namespace/name.
	pingProblems map[string]error
}

// New checks opts and returns an Engine that is not started.
func New(opts Options) (*Engine, error) {
	if err := opts.setDefaults(); err != nil {
		return nil, err
	}
	e := &Engine{
		opts:       opts,
		log:        opts.Logger,
		metrics:    metrics.New(opts.Registry),
		served:     map[string]*sourceStages{},
		lanes:      map[string]*pipeline.Lane{},
		readyCh:    make(chan struct{}),
		pingSender: delivery.NewSender(),
	}
	e.ingress = ingress.New(ingress.Config{
		MaxBodyBytes:   opts.MaxBodyBytes,
		DefaultTTL:     opts.DefaultTTL,
		PublishTimeout: opts.PublishTimeout,
		// With fsync the disk's commits are what the ingress waits for;
		// shards then share them (docs/performance.md).
		OneCommitAcrossShards: opts.Durability == DurabilityFsync,
		Limits:                opts.Limits,
		TLS:                   opts.TLS,
		BearerTokens:          opts.BearerTokens,
		SeparateAdmin:         opts.separateAdmin(),
		Logger:                opts.Logger,
		Tracer:                opts.Tracer,
		Registry:              opts.Registry,
		UI:                    opts.UI,
	}, (*ingressRuntime)(e), (*ingressStore)(e))
	e.ingress.SetKept(e.keptHandler())
	return e, nil
}

// Ingress is the HTTP listener: the ingress of every Broker and Channel,
// the probes, and /status and /metrics unless they have their own
// listener (Options.AdminAddr).
func (e *Engine) Ingress() *ingress.Server { return e.ingress }

// SetBearerTokens replaces the tokens the ingresses accept, for a rotated
// Secret; requests already admitted are not checked again.
func (e *Engine) SetBearerTokens(tokens ingress.BearerTokens) { e.ingress.SetBearerTokens(tokens) }

// Run starts the engine, serves until ctx ends, then drains within
// Options.ShutdownTimeout.
func (e *Engine) Run(ctx context.Context) error {
	if err := e.Start(ctx); err != nil {
		return err
	}
	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-e.ingress.Done():
		serveErr = fmt.Errorf("serving HTTP: %w", serveErr)
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.opts.ShutdownTimeout)
	defer cancel()
	return errors.Join(serveErr, e.Shutdown(sctx))
}

// Ready is closed once every ingress accepts events and every route is
// programmed.
func (e *Engine) Ready() <-chan struct{} { return e.readyCh }

// URL is the base URL of the HTTP listener, once started.
func (e *Engine) URL() string { return e.baseURL }

// AdminURL is the base URL of /status, /metrics and the probes, once
// started: the admin listener's, or URL without one.
func (e *Engine) AdminURL() string {
	if e.adminURL != "" {
		return e.adminURL
	}
	return e.baseURL
}

// NATSURL is the URL NATS clients connect to when Options.NATSAddr is set.
func (e *Engine) NATSURL() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.server == nil {
		return ""
	}
	return e.server.ClientURL()
}

// Statuses returns the status of every object of the table.
func (e *Engine) Statuses() []status.Report {
	e.statusMu.Lock()
	defer e.statusMu.Unlock()
	return append([]status.Report(nil), e.statuses...)
}

// Table returns the routing table being served, nil before Start.
func (e *Engine) Table() *routing.Table {
	if p := e.currentPlan(); p != nil {
		return p.Table()
	}
	return nil
}

func (e *Engine) currentPlan() *pipeline.Plan { return e.plan.Load() }

// Start starts NATS, the HTTP listener and the data plane of every Broker
// and Channel. It returns once the engine is ready, or fails and leaves
// nothing running.
func (e *Engine) Start(ctx context.Context) (err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started {
		return errors.New("engine: already started")
	}
	e.started = true
	defer func() {
		if err != nil {
			e.closeAll(context.Background())
		}
	}()

	if err := e.connectNATS(); err != nil {
		return err
	}
	if e.acks, err = newAckPublisher(e.nc, e.opts.PublishTimeout); err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	e.keeper = newKeeper(e.js, e.acks, e.metrics, &e.opts)
	e.proc = pipeline.NewProcessor(pipeline.ProcessorConfig{
		Plan:           &e.plan,
		Accepting:      &e.accepting,
		Publisher:      e.acks,
		Sender:         delivery.NewSender(),
		Keeper:         e.keeper,
		Log:            e.log,
		Tracer:         e.opts.Tracer,
		Matched:        e.opts.Matched,
		AckWait:        e.opts.AckWait,
		AttemptTimeout: e.opts.AttemptTimeout,
		DefaultTTL:     e.opts.DefaultTTL,
	})
	tlsConfig, err := e.ingress.LoadTLS()
	if err != nil {
		return fmt.Errorf("engine: %w", err)
	}
	if e.opts.separateAdmin() {
		e.adminLn = e.opts.AdminListener
		if e.adminLn == nil {
			e.adminLn, err = net.Listen("tcp", e.opts.AdminAddr)
			if err != nil {
				return fmt.Errorf("engine: admin listener: %w", err)
			}
		}
	}
	e.listener = e.opts.Listener
	if e.listener == nil {
		e.listener, err = net.Listen("tcp", e.opts.HTTPAddr)
		if err != nil {
			return fmt.Errorf("engine: %w", err)
		}
	}
	if e.adminLn != nil {
		e.adminURL = e.ingress.ServeAdmin(e.adminLn)
	}
	e.baseURL = e.ingress.Serve(e.listener, tlsConfig)

	e.work, e.cancelWork = context.WithCancel(context.Background())
	p, err := e.buildPlan(ctx, e.opts.Table)
	if err != nil {
		return err
	}
	e.ingressMaxBytes = ingressShare(e.opts.MaxStoreBytes, len(p.Sources()))
	for _, src := range p.Sources() {
		pl, err := e.setUpSource(ctx, src)
		if err != nil {
			return err
		}
		e.served[src.Names().ID] = pl
	}
	e.plan.Store(p)
	e.countLostMessages(ctx, p)
	go e.keeper.runSweeper(e.work, e.log)
	for _, pl := range e.served {
		for _, s := range pl.stages() {
			s.Start(e.work)
		}
	}
	e.accepting.Store(true)
	e.startPing()
	e.ready.Store(true)
	e.refreshStatus()
	close(e.readyCh)
	e.log.Info("serving", "url", e.baseURL, "admin_url", e.AdminURL(), "brokers", len(e.opts.Table.Brokers), "channels", len(e.opts.Table.Channels), "durability", e.opts.Durability, "ingress_shards", e.opts.IngressShards, "kept_max_bytes", e.keeper.maxBytes, "kept_max_age", e.opts.KeptMaxAge)
	return nil
}

// maxPayload is the NATS message size that holds any event the runtime
// takes in: an ingress body or a reply, plus its attributes as headers.
func maxPayload(maxBody int64) int32 {
	const headroom = 256 << 10
	n := max(maxBody, delivery.DefaultMaxReplyBytes) + headroom
	if n > 64<<20 {
		// NATS refuses larger payloads; ingress bodies above it get 503.
		n = 64 << 20
	}
	return int32(n)
}

func (e *Engine) buildPlan(ctx context.Context, t *routing.Table) (*pipeline.Plan, error) {
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	resolver, err := e.opts.NewResolver(t, e.baseURL)
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	p, err := pipeline.BuildPlan(t, resolve.All(ctx, t, resolver), pipeline.Serving{
		Metrics:             e.metrics,
		Endpoint:            e.ingress.Endpoint,
		IngressShards:       e.opts.IngressShards,
		Lanes:               e.lanes,
		Work:                e.work,
		DeliveryConcurrency: e.opts.DeliveryConcurrency,
		Tracing:             e.opts.Tracer != nil,
		Log:                 e.log,
	})
	if err != nil {
		return nil, fmt.Errorf("engine: %w", err)
	}
	return p, nil
}

// Reload serves t from now on. Events already accepted are kept: those
// routed are delivered under t's delivery options and addresses, the others
// are routed by t. Brokers and Channels that t drops stop being served,
// but their streams are kept, so that serving them again resumes where
// they stopped. On error the previous table stays in force.
func (e *Engine) Reload(ctx context.Context, t *routing.Table) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started || e.stopped {
		return errors.New("engine: reload needs a running engine")
	}
	p, err := e.buildPlan(ctx, t)
	if err != nil {
		return err
	}
	// Streams already set up keep the share they were given; new ones get
	// the share of the new table's size.
	e.ingressMaxBytes = ingressShare(e.opts.MaxStoreBytes, len(p.Sources()))
	// Every new stream exists before the new plan routes to it.
	added := map[string]*sourceStages{}
	for _, src := range p.Sources() {
		if _, ok := e.served[src.Names().ID]; ok {
			continue
		}
		pl, err := e.setUpSource(ctx, src)
		if err != nil {
			return err
		}
		added[src.Names().ID] = pl
	}
	old := e.plan.Swap(p)
	var errs []error
	for id, pl := range added {
		e.served[id] = pl
	}
	for _, src := range p.Sources() {
		pl := e.served[src.Names().ID]
		if err := e.setUp(ctx, "unpark", func(ctx context.Context) error { return e.updateUnpark(ctx, pl, src) }); err != nil {
			errs = append(errs, err)
		}
		for _, s := range pl.stages() {
			s.Start(e.work)
		}
	}
	for id, pl := range e.served {
		if p.Source(id) != nil {
			continue
		}
		for _, s := range pl.stages() {
			s.Stop()
		}
		delete(e.served, id)
	}
	e.purgeDeletedTargets(ctx, old, p)
	e.updatePing(t)
	e.refreshStatus()
	e.log.Info("reloaded the routing table", "brokers", len(t.Brokers), "channels", len(t.Channels))
	return errors.Join(errs...)
}

// purgeDeletedTargets keeps the held deliveries of Triggers and
// Subscriptions that are gone as kept letters, reason unrouted, and
// removes them. When every target of the source is ready, the unpark
// stage follows every hold subject and moves them back to the dispatch
// stage, which keeps them; keeping them here as well could count one
// twice.
func (e *Engine) purgeDeletedTargets(ctx context.Context, old, cur *pipeline.Plan) {
	for _, src := range old.Sources() {
		now := cur.Source(src.Names().ID)
		if now == nil || now.UnparksAll() {
			continue
		}
		for _, t := range src.Targets() {
			if now.Target(t.Token()) != nil {
				continue
			}
			for _, st := range []string{pipeline.StageHoldSend, pipeline.StageHoldDead} {
				if err := e.keepHeld(ctx, src, t, src.Names().Subject(st, t.Token())); err != nil {
					kind, name := t.Describe()
					e.log.Warn("could not keep the held events of a deleted target; they stay held", "kind", kind, "name", name, "error", err)
				}
			}
		}
	}
}

// keepHeld keeps, then removes, each delivery of subject, held for t of
// src, one at a time: a crash in between keeps a letter twice under one
// message ID, which the store takes once.
func (e *Engine) keepHeld(ctx context.Context, src *pipeline.Source, t *pipeline.Target, subject string) error {
	stream := src.Names().OutStream
	s, err := e.js.Stream(ctx, stream)
	if err != nil {
		return err
	}
	for seq := uint64(1); ; {
		raw, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("reading the held deliveries of %s: %w", subject, err)
		}
		m := &nats.Msg{Subject: raw.Subject, Header: raw.Header, Data: raw.Data}
		if err := e.proc.KeepDeleted(ctx, src, t, m, stream, raw.Sequence); err != nil {
			return err
		}
		if _, err := deleteMsg(ctx, s, raw.Sequence); err != nil {
			return fmt.Errorf("removing a held delivery of %s: %w", subject, err)
		}
		seq = raw.Sequence + 1
	}
}

func (e *Engine) refreshStatus() {
	p := e.currentPlan()
	if p == nil {
		return
	}
	programmed := map[string]bool{}
	for id := range e.served {
		programmed[id] = true
	}
	fault := e.storeFault()
	e.statusMu.Lock()
	defer e.statusMu.Unlock()
	e.statuses = status.Compute(status.Input{
		Table:    p.Table(),
		BaseURL:  e.baseURL,
		Resolved: p.Resolved(),
		Ingress: func(kind string, o routing.Source) status.Ingress {
			k := pipeline.KindBroker
			if kind == knative.KindChannel {
				k = pipeline.KindChannel
			}
			if e.stopped {
				return status.Ingress{Reason: "ShuttingDown", Message: "the runtime is shutting down"}
			}
			if fault != nil {
				return status.Ingress{Reason: "StorageFull", Message: fault.Error()}
			}
			if programmed[pipeline.NamesFor(k, o).ID] {
				return status.Ingress{Ready: true}
			}
			return status.Ingress{}
		},
		Ping: func(o routing.Source) status.Ingress {
			ready, reason, message := e.pingStatus(o)
			return status.Ingress{Ready: ready, Reason: reason, Message: message}
		},
		Previous: e.statuses,
		Now:      time.Now(),
	})
}

// Shutdown drains the engine: ingresses stop accepting, the pull loops stop,
// deliveries in progress get until shortly before ctx's deadline to finish
// and are then abandoned (their messages stay in JetStream), and NATS stops
// after writing what it holds.
func (e *Engine) Shutdown(ctx context.Context) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.started || e.stopped {
		return nil
	}
	e.stopped = true
	e.accepting.Store(false)
	e.ready.Store(false)
	e.refreshStatus()
	e.log.Info("shutting down")
	return e.closeAll(ctx)
}

func (e *Engine) closeAll(ctx context.Context) error {
	e.accepting.Store(false)
	var errs []error
	// Fire no more ticks; those being stored are abandoned, and the
	// other replicas, if any, store them.
	if e.pinger != nil {
		e.pinger.Stop()
	}
	// Stop taking requests; requests in progress finish (an ingress waits at
	// most PublishTimeout for JetStream).
	if e.ingress.Serving() {
		if err := e.ingress.Stop(ctx); err != nil {
			errs = append(errs, err)
		}
	} else {
		for _, ln := range []net.Listener{e.listener, e.adminLn} {
			if ln != nil {
				_ = ln.Close()
			}
		}
	}
	for _, pl := range e.served {
		for _, s := range pl.stages() {
			s.Stop()
		}
	}
	// Give deliveries in progress until shortly before the deadline.
	grace := ctx
	if deadline, ok := ctx.Deadline(); ok {
		var cancel context.CancelFunc
		grace, cancel = context.WithDeadline(ctx, deadline.Add(-time.Second))
		defer cancel()
	}
	if err := e.waitStages(grace); err != nil {
		// Abandon what is left: those messages stay in JetStream.
		e.log.Warn("abandoning deliveries still in progress", "error", err)
	}
	if e.cancelWork != nil {
		e.cancelWork()
	}
	if err := e.waitStages(ctx); err != nil {
		errs = append(errs, fmt.Errorf("deliveries still in progress at the deadline: %w", err))
	} else {
		for _, l := range e.lanes {
			l.Close()
		}
	}
	if e.nc != nil {
		// Acknowledgements are buffered; send them before closing.
		if err := e.nc.FlushTimeout(time.Second); err != nil && !errors.Is(err, nats.ErrConnectionClosed) {
			errs = append(errs, fmt.Errorf("flushing NATS: %w", err))
		}
		e.nc.Close()
	}
	if e.server != nil {
		if err := e.server.Shutdown(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// waitStages waits for the messages in progress in every stage, and then
// for the first attempts the route stages started.
func (e *Engine) waitStages(ctx context.Context) error {
	for _, pl := range e.served {
		for _, s := range pl.stages() {
			if err := s.Wait(ctx); err != nil {
				return err
			}
		}
	}
	for _, l := range e.lanes {
		if err := l.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}
