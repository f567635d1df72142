package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/restmap"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/status"
)

// Defaults of Options.
const (
	DefaultTablePollInterval = 2 * time.Second
	DefaultResync            = 5 * time.Minute
	// debounce gathers a burst of watch events into one pass.
	debounce = 50 * time.Millisecond
	// DefaultKubeAPIQPS and DefaultKubeAPIBurst bound the runtime's
	// requests to the API server. client-go's own defaults (5 and 10)
	// would make a first status pass over a thousand objects, three
	// requests each, last ten minutes.
	DefaultKubeAPIQPS   = 100
	DefaultKubeAPIBurst = 300
	// statusWriters is how many status writes are in flight at once.
	statusWriters = 4
	// maxRetryDelay bounds the wait before a failed status write is tried
	// again.
	maxRetryDelay = 30 * time.Second
)

// Options configure a Runtime. Config and TablePath are required.
type Options struct {
	// Config reaches the API server: in-cluster, or from a kubeconfig. A
	// QPS or Burst of 0 is given DefaultKubeAPIQPS or DefaultKubeAPIBurst.
	Config *rest.Config
	// TablePath is the routing table file, mounted from the ConfigMap knc
	// build generates. It is read again every TablePollInterval: a
	// ConfigMap volume is updated by swapping a symlink, which a poll sees
	// whatever the filesystem.
	TablePath         string
	TablePollInterval time.Duration
	// Namespaces are those the runtime serves (its own, normally): there it
	// also reports on knc objects missing from the table. The namespaces
	// of the table's objects are watched in any case.
	Namespaces []string
	// Engine configures the data plane; its Table, NewResolver and Logger
	// are set by the Runtime.
	Engine engine.Options
	// Resync is how often every reference is resolved again and every
	// status checked, whatever the watches said.
	Resync time.Duration
	// ClusterDomain is the DNS domain of the cluster's Services, for
	// references to v1 Services.
	ClusterDomain string
	// Logger receives the runtime's logs; nil discards them.
	Logger *slog.Logger
}

// Runtime serves a routing table in a cluster and reports the status of
// its objects. Create it with New and Run it.
type Runtime struct {
	opts  Options
	log   *slog.Logger
	ready chan struct{}

	mu     sync.Mutex
	engine *engine.Engine
	// pending is the snapshot the engine resolves with during a Start or
	// Reload; programmed is the one it last built a plan from, with table.
	pending, programmed *snapshot
	programmedResults   resolve.Results
	table               *routing.Table
	tableBytes          []byte

	objectsChanged chan struct{}
	targetsChanged chan struct{}
}

// New checks opts and returns a Runtime that is not running.
func New(opts Options) (*Runtime, error) {
	if opts.Config == nil {
		return nil, errors.New("cluster: a Kubernetes client configuration is required")
	}
	if opts.TablePath == "" {
		return nil, errors.New("cluster: a routing table file is required")
	}
	opts.Config = rest.CopyConfig(opts.Config)
	if opts.Config.QPS == 0 {
		opts.Config.QPS = DefaultKubeAPIQPS
	}
	if opts.Config.Burst == 0 {
		opts.Config.Burst = DefaultKubeAPIBurst
	}
	if opts.TablePollInterval <= 0 {
		opts.TablePollInterval = DefaultTablePollInterval
	}
	if opts.Resync <= 0 {
		opts.Resync = DefaultResync
	}
	if opts.ClusterDomain == "" {
		opts.ClusterDomain = DefaultClusterDomain
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	return &Runtime{
		opts:           opts,
		log:            opts.Logger,
		ready:          make(chan struct{}),
		objectsChanged: make(chan struct{}, 1),
		targetsChanged: make(chan struct{}, 1),
	}, nil
}

// Ready is closed once the engine serves the table; statuses are written
// from then on.
func (r *Runtime) Ready() <-chan struct{} { return r.ready }

// Engine returns the data plane, once Run has started it.
func (r *Runtime) Engine() *engine.Engine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.engine
}

// URL is the base URL of the engine's HTTP listener, once ready.
func (r *Runtime) URL() string {
	if e := r.Engine(); e != nil {
		return e.URL()
	}
	return ""
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// Run serves until ctx ends, then drains the engine.
func (r *Runtime) Run(ctx context.Context) error {
	data, table, err := readTable(r.opts.TablePath)
	if err != nil {
		return err
	}
	httpClient, err := rest.HTTPClientFor(r.opts.Config)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	dyn, err := dynamic.NewForConfigAndClient(r.opts.Config, httpClient)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	mapper, err := restmap.NewForConfigAndClient(r.opts.Config, httpClient)
	if err != nil {
		return fmt.Errorf("cluster: %w", err)
	}
	writer := &statusWriter{client: dyn}

	watchCtx, stopWatches := context.WithCancel(context.WithoutCancel(ctx))
	defer stopWatches()
	var resolver *Resolver
	w := newWatches(watchCtx, dyn, r.opts.Resync, r.log, func(res schema.GroupVersionResource, ns, name string) {
		if isKnativeKind(res) {
			signal(r.objectsChanged)
		}
		if resolver != nil && resolver.tracks(res, ns, name) {
			signal(r.targetsChanged)
		}
	})
	resolver = newResolver(w, mapper, r.opts.ClusterDomain)
	if err := r.watchKinds(ctx, w, table); err != nil {
		return err
	}

	results := resolver.resolveAll(ctx, table)
	opts := r.opts.Engine
	opts.Table = table
	opts.Logger = r.log
	// A store that fills up or recovers changes IngressReady.
	opts.StatusChanged = func() { signal(r.objectsChanged) }
	opts.NewResolver = func(*routing.Table, string) (resolve.Resolver, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.pending, nil
	}
	r.mu.Lock()
	r.pending = newSnapshot(table, results)
	r.mu.Unlock()
	eng, err := engine.New(opts)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.engine = eng
	r.mu.Unlock()

	runErr := make(chan error, 1)
	go func() { runErr <- eng.Run(ctx) }()
	select {
	case <-eng.Ready():
	case err := <-runErr:
		if err == nil {
			err = ctx.Err()
		}
		return err
	}
	r.programmed, r.programmedResults, r.table, r.tableBytes = r.pending, results, table, data
	r.log.Info("serving in cluster mode", "url", eng.URL(), "brokers", len(table.Brokers), "channels", len(table.Channels), "namespaces", r.watchedNamespaces(table))

	close(r.ready)
	return r.loop(ctx, w, resolver, writer, runErr)
}

// loop reacts to the table file, the watches and the resync timer until
// the engine stops.
func (r *Runtime) loop(ctx context.Context, w *watches, resolver *Resolver, writer *statusWriter, runErr <-chan error) error {
	poll := time.NewTicker(r.opts.TablePollInterval)
	defer poll.Stop()
	resync := time.NewTicker(r.opts.Resync)
	defer resync.Stop()
	// The first pass reports on every object at once.
	reportTimer := time.NewTimer(0)
	resolveTimer := time.NewTimer(time.Hour)
	resolveTimer.Stop()
	retryDelay := time.Second
	for {
		select {
		case err := <-runErr:
			return err
		case <-poll.C:
			table, data, err := routing.Read(r.opts.TablePath)
			if data == nil && err != nil {
				r.log.Error("reading the routing table failed; the previous one stays in force", "path", r.opts.TablePath, "error", err)
				continue
			}
			if bytes.Equal(data, r.tableBytes) {
				continue
			}
			if err != nil {
				r.log.Error("the new routing table is invalid; the previous one stays in force", "path", r.opts.TablePath, "error", err)
				r.tableBytes = data // not again until it changes
				continue
			}
			if err := r.watchKinds(ctx, w, table); err != nil {
				r.log.Error("watching the new table's namespaces failed", "error", err)
			}
			if err := r.program(ctx, resolver, table, true); err != nil {
				r.log.Error("reloading the routing table failed; the previous one stays in force", "error", err)
				continue
			}
			r.tableBytes = data
			r.log.Info("reloaded the routing table", "path", r.opts.TablePath, "brokers", len(table.Brokers), "channels", len(table.Channels))
			reportTimer.Reset(0)
		case <-r.targetsChanged:
			resolveTimer.Reset(debounce)
		case <-resolveTimer.C:
			if err := r.program(ctx, resolver, r.table, false); err != nil {
				r.log.Error("re-programming after a referent changed failed", "error", err)
			}
			reportTimer.Reset(0)
		case <-r.objectsChanged:
			reportTimer.Reset(debounce)
		case <-resync.C:
			if err := r.program(ctx, resolver, r.table, false); err != nil {
				r.log.Error("resync failed", "error", err)
			}
			reportTimer.Reset(0)
		case <-reportTimer.C:
			if r.report(ctx, w, writer) {
				reportTimer.Reset(retryDelay)
				retryDelay = min(2*retryDelay, maxRetryDelay)
			} else {
				retryDelay = time.Second
			}
		}
	}
}

// program resolves table and reloads the engine with it when the table is
// new or a reference resolves differently than the engine has it.
func (r *Runtime) program(ctx context.Context, resolver *Resolver, table *routing.Table, newTable bool) error {
	results := resolver.resolveAll(ctx, table)
	snap := newSnapshot(table, results)
	if !newTable && snap.equal(r.programmed) {
		return nil
	}
	r.mu.Lock()
	r.pending = snap
	r.mu.Unlock()
	if err := r.Engine().Reload(ctx, table); err != nil {
		return err
	}
	r.programmed, r.programmedResults, r.table = snap, results, table
	return nil
}

// report computes the status of every object and writes those that
// changed. It returns true when something failed and should be tried
// again.
func (r *Runtime) report(ctx context.Context, w *watches, writer *statusWriter) bool {
	table := r.table
	live, err := r.liveObjects(ctx, w, table)
	if err != nil {
		r.log.Error("reading the live objects failed", "error", err)
		return true
	}
	ingress := map[liveKey]status.Ingress{}
	for _, o := range r.Engine().Statuses() {
		c := o.ConditionOf(status.ConditionIngressReady)
		if c == nil {
			continue
		}
		ing := status.Ingress{Ready: c.Status == status.True}
		if c.Status == status.False {
			ing.Reason, ing.Message = c.Reason, c.Message
		}
		ingress[liveKey{o.Kind, o.Metadata.Namespace, o.Metadata.Name}] = ing
	}
	// Whether the engine fires each PingSource.
	fired := map[liveKey]status.Ingress{}
	for _, o := range r.Engine().Statuses() {
		c := o.ConditionOf(status.ConditionDeployed)
		if o.Kind != knative.KindPingSource || c == nil {
			continue
		}
		f := status.Ingress{Ready: c.Status == status.True}
		if c.Status == status.False {
			f.Reason, f.Message = c.Reason, c.Message
		}
		fired[liveKey{o.Kind, o.Metadata.Namespace, o.Metadata.Name}] = f
	}
	computed := status.Compute(status.Input{
		Table:    table,
		Resolved: r.programmedResults,
		Ingress: func(kind string, o routing.Source) status.Ingress {
			return ingress[liveKey{kind, o.Namespace, o.Name}]
		},
		Ping: func(o routing.Source) status.Ingress {
			return fired[liveKey{knative.KindPingSource, o.Namespace, o.Name}]
		},
		Now: time.Now(),
	})
	own := map[string]bool{}
	for _, ns := range r.opts.Namespaces {
		own[ns] = true
	}
	desired := plan(planInput{table: table, computed: computed, live: live, own: own})
	var (
		mu      sync.Mutex
		failed  bool
		written int
		wg      sync.WaitGroup
		work    = make(chan desiredStatus)
	)
	for range min(statusWriters, len(desired)) {
		wg.Go(func() {
			for d := range work {
				ok, err := writer.write(ctx, d)
				mu.Lock()
				if err != nil {
					failed = true
					r.log.Warn("writing a status failed; trying again", "error", err)
				} else if ok {
					written++
				}
				mu.Unlock()
			}
		})
	}
	for _, d := range desired {
		work <- d
	}
	close(work)
	wg.Wait()
	if written > 0 {
		r.log.Debug("wrote statuses", "count", written)
	}
	return failed
}

// watchedNamespaces are the runtime's own namespaces and those of the
// table's objects, sorted.
func (r *Runtime) watchedNamespaces(t *routing.Table) []string {
	set := map[string]bool{}
	for _, ns := range r.opts.Namespaces {
		set[ns] = true
	}
	for _, b := range t.Brokers {
		set[b.Namespace] = true
		for _, tr := range b.Triggers {
			set[tr.Namespace] = true
		}
	}
	for _, c := range t.Channels {
		set[c.Namespace] = true
		for _, s := range c.Subscriptions {
			set[s.Namespace] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// watchKinds starts the informers of the four kinds in every namespace
// the table needs, Sequences and Parallels only when it has some, and
// PingSources in the namespaces of the table's. PingSources whose kind
// the cluster does not serve (no CRD of sources.knative.dev) are fired
// all the same; their status is not written.
func (r *Runtime) watchKinds(ctx context.Context, w *watches, t *routing.Table) error {
	var errs []error
	for _, ns := range r.watchedNamespaces(t) {
		for _, k := range kindsOf(t) {
			if _, err := w.informer(ctx, k.resource, ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, ns := range pingNamespaces(t) {
		if _, err := w.informer(ctx, PingSourcesResource, ns); err != nil {
			r.log.Warn("cannot watch PingSources; their status is not written", "namespace", ns, "error", err)
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("cluster: %w", errors.Join(errs...))
	}
	return nil
}

// pingNamespaces are the namespaces of the table's PingSources, sorted.
func pingNamespaces(t *routing.Table) []string {
	set := map[string]bool{}
	for _, ps := range t.PingSources {
		set[ps.Namespace] = true
	}
	return slices.Sorted(maps.Keys(set))
}

func (r *Runtime) liveObjects(ctx context.Context, w *watches, t *routing.Table) (liveSet, error) {
	live := liveSet{}
	for _, ns := range r.watchedNamespaces(t) {
		for _, k := range kindsOf(t) {
			objs, err := w.list(ctx, k.resource, ns)
			if err != nil {
				return nil, err
			}
			for _, o := range objs {
				live[liveKey{k.kind, o.GetNamespace(), o.GetName()}] = o
			}
		}
	}
	for _, ns := range pingNamespaces(t) {
		objs, err := w.list(ctx, PingSourcesResource, ns)
		if err != nil {
			// watchKinds said why; the PingSources still fire.
			continue
		}
		for _, o := range objs {
			live[liveKey{knative.KindPingSource, o.GetNamespace(), o.GetName()}] = o
		}
	}
	return live, nil
}

// kindsOf lists the kinds the runtime watches for t: the four kinds, and
// Sequences and Parallels only when t has some, so that a cluster whose
// CRDs come from elsewhere need not serve the flows for a runtime that
// has none to report.
func kindsOf(t *routing.Table) []watchedKind {
	if t != nil && (len(t.Sequences) > 0 || len(t.Parallels) > 0) {
		return kinds
	}
	return slices.DeleteFunc(slices.Clone(kinds), func(k watchedKind) bool {
		return k.resource == SequencesResource || k.resource == ParallelsResource
	})
}

func isKnativeKind(res schema.GroupVersionResource) bool {
	if res == PingSourcesResource {
		return true
	}
	for _, k := range kinds {
		if k.resource == res {
			return true
		}
	}
	return false
}

// readTable reads the table file, or the directory of a table split across
// several ConfigMaps (routing.Read).
func readTable(path string) ([]byte, *routing.Table, error) {
	t, data, err := routing.Read(path)
	if err != nil {
		return nil, nil, fmt.Errorf("cluster: %w", err)
	}
	return data, t, nil
}
