package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/drawing"
	"github.com/knc-dev/knc/runtime/command"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ui"
)

// runFlags are knc run's flags: the runtime's settings, and how it
// compiles the manifests it serves.
type runFlags struct {
	config    *runtimeconfig.Config
	load      loadFlags
	addresses addressFlags
}

func newRunCmd() *cobra.Command {
	f := runFlags{config: runtimeconfig.New(runtimeconfig.Run)}
	cmd := &cobra.Command{
		Use:   "run [PATH...]",
		Short: "Serve the compiled routes locally on an embedded NATS JetStream",
		Long: `Run serves Brokers and Channels on one HTTP listener and delivers their
events to Triggers and Subscriptions, as Knative Eventing would, with an
embedded NATS JetStream server as the durable store. Nothing else is needed:
no cluster, no NATS installation.

The routes come from manifests, compiled in memory as 'knc build' compiles
them (PATH, the current directory by default), or from a routing table
written by 'knc build' (--table). Subscribers that are Services in a cluster
can be pointed at local processes with --address and --services-url.

Each Broker is served at /brokers/NAMESPACE/NAME and each Channel at
/channels/NAMESPACE/NAME. PingSources fire on their schedule into their
sink (see docs/sources-and-flows.md); $KNC_TEST_CLOCK_FILE, for tests
only, makes them fire by the time a file holds instead of the clock. An event is answered 202 only once it is stored;
events accepted but not yet delivered are delivered after a restart with the
same --data-dir, which defaults to .knc-data in the current directory so
that a restart finds them. The listener also serves:

  /status    the Knative status of every object, as JSON
  /metrics   Prometheus metrics
  /ui        a live page: the topology, each object's Ready condition, and
             the counters of every route as they move
  /healthz   liveness
  /readyz    readiness: every route is set up and the store takes events

On a workstation one address is simplest, so /status, /metrics and /ui are
served beside the ingresses. With --admin-addr they move to a listener of
their own, as in a cluster, and the ingress listener answers 404 for them.
The page lists the last events each Trigger or Subscription matched
(attributes only) with --ui-recent-events, or runtime.ui.recentEvents in
knc.yaml; none by default.

With --tracing-endpoint, or runtime.tracing in knc.yaml, or
$OTEL_EXPORTER_OTLP_ENDPOINT, it exports OpenTelemetry spans of each
event's ingress, routing, delivery attempts and replies over OTLP, and
sends each subscriber the context of its attempt's span in traceparent.

With --bearer-tokens DIR, the ingresses DIR holds a file for
(broker.NAMESPACE.NAME or channel.NAMESPACE.NAME, one token a line) require
'Authorization: Bearer TOKEN'. DIR is read again every
--bearer-tokens-reload-interval (10s): added, changed and revoked tokens
apply without a restart, and a stray file is logged and skipped. A token
file that cannot be read, is empty or holds only blank lines keeps its
ingress's previous tokens, or makes it refuse every request (503) if it had
none; /readyz and knc_ingress_bearer_tokens_unreadable say so.

Run logs to stderr and prints one line there once it is ready. SIGHUP
reloads the table: new routes apply to events not yet routed, and nothing
accepted is lost. SIGINT or SIGTERM drains within --shutdown-timeout and
exits 0; what is not delivered by then stays stored.

The exit code is 1 when the table is invalid or the runtime fails, and 2 on a
usage or I/O error.`,
		Example: `  # Run the quickstart, with every Service subscriber shown by 'knc display'.
  knc display --addr 127.0.0.1:9090 &
  knc run examples/quickstart --services-url http://127.0.0.1:9090/

  # Serve a table built by 'knc build'.
  knc run --table build/routing-table.json

  # Open http://127.0.0.1:8080/ui, which lists each route's last 20 events.
  knc run examples/quickstart --ui-recent-events 20

  # Export spans to a local OpenTelemetry collector over OTLP/gRPC.
  knc run examples/quickstart --tracing-endpoint http://127.0.0.1:4317 --tracing-protocol grpc

  # Listen on every interface, keep the data elsewhere, log JSON.
  knc run --table routes.json --http-addr 0.0.0.0:8080 --data-dir /var/lib/knc --log-format json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRun(cmd, args, &f)
		},
	}
	command.RegisterFlags(cmd.Flags(), runtimeconfig.Run, f.config)
	f.load.register(cmd)
	f.addresses.register(cmd)
	return cmd
}

func runRun(cmd *cobra.Command, args []string, f *runFlags) error {
	c := f.config
	command.MarkGiven(cmd.Flags(), c)
	if err := c.FromEnvironment(runtimeconfig.Run, os.LookupEnv); err != nil {
		return usageError("%v", err)
	}
	log, err := command.NewLogger(cmd.ErrOrStderr(), c.LogFormat, c.LogLevel)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	var cfg *project.Config
	graphs := &drawings{}
	load := func() (*routing.Table, *project.Config, error) {
		t, pc, err := loadRunTable(cmd.ErrOrStderr(), args, f, graphs)
		if pc != nil {
			cfg = pc
		}
		return t, pc, err
	}
	table, _, err := load()
	if err != nil {
		return err
	}
	fromKncYAML(c, cfg)
	opts := engine.Options{Table: table, Logger: log}
	if err := command.Apply(&opts, c); err != nil {
		return err
	}
	var eng *engine.Engine
	if err := command.ServeUI(&opts, c, func() *engine.Engine { return eng }, graphs.of, drawPage); err != nil {
		return err
	}
	tc, err := command.TracingConfig(c)
	if err != nil {
		return err
	}
	if opts.Tracer, err = command.StartTracing(ctx, cmd.ErrOrStderr(), log, tc); err != nil {
		return err
	}
	// Deferred before the engine runs, so it sends the spans of the
	// drain too.
	defer command.StopTracing(opts.Tracer, log)
	eng, err = engine.New(opts)
	if err != nil {
		return &exitError{code: exitFailed, err: err}
	}

	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)

	runErr := make(chan error, 1)
	go func() { runErr <- eng.Run(ctx) }()
	select {
	case <-eng.Ready():
		fmt.Fprintf(cmd.ErrOrStderr(), "knc: serving %s and %s on %s\n",
			plural(len(table.Brokers), "broker"), plural(len(table.Channels), "channel"), eng.URL())
		fmt.Fprintf(cmd.ErrOrStderr(), "knc: status at %s/status, metrics at %s/metrics, live page at %s/ui\n", eng.AdminURL(), eng.AdminURL(), eng.AdminURL())
		if url := eng.NATSURL(); url != "" {
			fmt.Fprintf(cmd.ErrOrStderr(), "knc: NATS clients can connect at %s\n", url)
		}
		go command.WatchTokens(ctx, c, eng, log)
		return waitRun(ctx, eng, func() (*routing.Table, error) { t, _, err := load(); return t, err }, hup, runErr, log)
	case err := <-runErr:
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		return nil
	}
}

// waitRun serves until Run returns, reloading the table on SIGHUP.
func waitRun(ctx context.Context, eng *engine.Engine, load func() (*routing.Table, error), hup <-chan os.Signal, runErr <-chan error, log *slog.Logger) error {
	for {
		select {
		case <-hup:
			table, err := load()
			if err == nil {
				err = eng.Reload(ctx, table)
			}
			var ex *cuelimit.Exceeded
			if errors.As(err, &ex) {
				// The evaluation cannot be stopped: it would take the
				// runtime's memory while it serves.
				log.Error("reload failed, and the CUE evaluation over its limits cannot be stopped; exiting", "error", err)
				return &exitError{code: exitFailed, err: err}
			}
			if err != nil {
				log.Error("reload failed; the previous routing table stays in force", "error", err)
			}
		case err := <-runErr:
			if err != nil {
				return &exitError{code: exitFailed, err: err}
			}
			return nil
		}
	}
}

// drawings remember the graph of the project each table served was
// compiled from: the last two, the one served and the one a reload may
// replace it with.
type drawings struct {
	mu     sync.Mutex
	tables [2]*routing.Table
	graphs [2]*topology.Graph
}

func (d *drawings) add(t *routing.Table, g *topology.Graph) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.tables[0], d.graphs[0] = d.tables[1], d.graphs[1]
	d.tables[1], d.graphs[1] = t, g
}

// of returns the graph of t, nil for a table read from a file.
func (d *drawings) of(t *routing.Table) *topology.Graph {
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, dt := range d.tables {
		if dt == t && t != nil {
			return d.graphs[i]
		}
	}
	return nil
}

// loadRunTable returns the table to serve: decoded from --table, or
// compiled from the manifests under paths (the current directory when no
// path is given). The config is returned when manifests were compiled.
//
// A table compiled from manifests is recorded in graphs with the drawing
// knc graph makes of them, which the live page shows.
func loadRunTable(stderr io.Writer, paths []string, f *runFlags, graphs *drawings) (*routing.Table, *project.Config, error) {
	if f.config.Table == "" {
		t, cfg, set, err := compileProject(stderr, &f.load, &f.addresses, paths)
		if err == nil && len(t.Brokers) == 0 && len(t.Channels) == 0 && len(t.PingSources) == 0 {
			return nil, nil, usageError("nothing to serve: no Broker, Channel or PingSource that knc runs was found; give the PATH of your manifests, or --table FILE")
		}
		if err == nil {
			graphs.add(t, graph.Build(set, t))
		}
		return t, cfg, err
	}
	if len(paths) > 0 {
		return nil, nil, usageError("give either PATH arguments or --table, not both")
	}
	// A file, or the directory of a table split across files.
	t, data, err := routing.Read(f.config.Table)
	switch {
	case err != nil && data == nil:
		return nil, nil, &exitError{code: exitTrouble, err: err}
	case err != nil:
		return nil, nil, &exitError{code: exitFailed, err: err}
	}
	return t, nil, nil
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// fromKncYAML fills the settings of c that were not given, on the command
// line or through the environment, from the runtime section of the
// knc.yaml the manifests were compiled with, as knc build carries them to
// the cluster's runtime.
func fromKncYAML(c *runtimeconfig.Config, cfg *project.Config) {
	if cfg == nil || cfg.Runtime == nil {
		return
	}
	r := cfg.Runtime
	if r.TTL != nil && !c.Given("ttl") {
		c.TTL = int(*r.TTL)
	}
	if r.MaxEventBytes != nil && !c.Given("max-body-bytes") {
		c.MaxBodyBytes = *r.MaxEventBytes
	}
	if r.Durability != "" && !c.Given("durability") && !c.Given("fsync") {
		c.Durability = r.Durability
	}
	if r.NATS != nil && r.NATS.URL != "" && !c.Given("nats-url") {
		c.NATSURL = r.NATS.URL
	}
	if r.UI != nil && r.UI.RecentEvents != nil && !c.Given("ui-recent-events") {
		c.UIRecentEvents = int(*r.UI.RecentEvents)
	}
	if k := r.KeptLetters; k != nil {
		// The schema checked both: a quantity and a duration.
		if q, err := resource.ParseQuantity(k.MaxSize); err == nil && k.MaxSize != "" && !c.Given("kept-max-bytes") {
			c.KeptMaxBytes = q.Value()
		}
		if d, err := time.ParseDuration(k.MaxAge); err == nil && k.MaxAge != "" && !c.Given("kept-max-age") {
			c.KeptMaxAge = d
		}
	}
	if t := r.Tracing; t != nil {
		if !c.Given("tracing-endpoint") {
			c.TracingEndpoint = t.Endpoint
		}
		if !c.Given("tracing-protocol") {
			c.TracingProtocol = t.Protocol
		}
		if !c.Given("tracing-insecure") {
			c.TracingInsecure = t.Insecure
		}
		if t.SamplingRatio != nil && !c.Given("tracing-sampling-ratio") {
			c.TracingSamplingRatio = *t.SamplingRatio
			c.MarkGiven("tracing-sampling-ratio")
		}
		// The flags' headers add to knc.yaml's.
		headers := maps.Clone(t.Headers)
		if len(c.TracingHeaders) > 0 {
			if headers == nil {
				headers = map[string]string{}
			}
			maps.Copy(headers, c.TracingHeaders)
		}
		if headers != nil {
			c.TracingHeaders = headers
		}
	}
}

// drawPage lays out the live page's drawing with knc-draw. Without one it
// answers ui.ErrNoDrawing, as the runtime's own binary does, so that the
// page lays the drawing out in the browser instead.
func drawPage(ctx context.Context, w io.Writer, g *topology.Graph) error {
	err := drawing.WriteSVG(ctx, w, g)
	if errors.Is(err, drawing.ErrNoDrawer) {
		return fmt.Errorf("%w: %w", ui.ErrNoDrawing, err)
	}
	return err
}
