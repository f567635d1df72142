package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/safeio"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/natsserver"
	"github.com/knc-dev/knc/runtime/status"
	"github.com/knc-dev/knc/runtime/tracing"
	"github.com/knc-dev/knc/runtime/ui"
)

// Environment variables that carry NATS secrets, so that they appear
// neither in the process's arguments nor in the Deployment's spec (they come
// from a Secret through env valueFrom).
const (
	envNATSUser     = "KNC_NATS_USER"
	envNATSPassword = "KNC_NATS_PASSWORD"
	envNATSToken    = "KNC_NATS_TOKEN"
)

// serveFlags are the flags knc run and knc runtime share for ingress
// limits, TLS, bearer tokens and where JetStream runs.
type serveFlags struct {
	limits       ingress.Limits
	tlsCert      string
	tlsKey       string
	bearerTokens string
	// tokenReload is how often the bearer token directory is read again.
	tokenReload time.Duration

	natsURL        string
	natsCreds      string
	natsSecretDir  string
	natsCA         string
	streamReplicas int
	fsync          bool
	durability     string
	ttl            int
	ingressShards  int
	clusterName    string
	clusterAddr    string
	clusterRoutes  []string
	serverName     string

	tracingEndpoint string
	tracingProtocol string
	tracingInsecure bool
	tracingSampling float64
	tracingHeaders  map[string]string

	uiRecentEvents int
}

func (f *serveFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.IntVar(&f.limits.MaxHeaderBytes, "max-header-bytes", ingress.DefaultMaxHeaderBytes, "largest request headers accepted; larger ones get 431")
	fl.DurationVar(&f.limits.ReadHeaderTimeout, "read-header-timeout", ingress.DefaultReadHeaderTimeout, "time a client has to send its request headers")
	fl.DurationVar(&f.limits.ReadTimeout, "read-timeout", ingress.DefaultReadTimeout, "time a client has to send a whole request; a slower body gets 408")
	fl.DurationVar(&f.limits.WriteTimeout, "write-timeout", ingress.DefaultWriteTimeout, "time to write a response")
	fl.DurationVar(&f.limits.IdleTimeout, "idle-timeout", ingress.DefaultIdleTimeout, "how long an idle keep-alive connection stays open")
	fl.IntVar(&f.limits.MaxConcurrentRequests, "max-concurrent-requests", ingress.DefaultMaxConcurrentRequests, "ingress requests served at once; more get 429 with Retry-After")
	fl.StringVar(&f.tlsCert, "tls-cert", "", "serve HTTPS with this PEM certificate `FILE` (with --tls-key); it is read again when it changes")
	fl.StringVar(&f.tlsKey, "tls-key", "", "PEM private key `FILE` of --tls-cert")
	fl.StringVar(&f.bearerTokens, "bearer-tokens", "", "`DIR` of token files named broker.NAMESPACE.NAME or channel.NAMESPACE.NAME (a mounted Secret); those ingresses require 'Authorization: Bearer TOKEN' (one token a line)")
	fl.DurationVar(&f.tokenReload, "bearer-tokens-reload-interval", DefaultTokenReloadInterval, "how often the --bearer-tokens directory is read again, so that added, changed and revoked tokens apply")
	fl.StringVar(&f.natsURL, "nats-url", "", "use the NATS cluster at `URL` (nats:// or tls://, several separated by commas) instead of the embedded server; $"+envNATSUser+", $"+envNATSPassword+" and $"+envNATSToken+" authenticate")
	fl.StringVar(&f.natsCreds, "nats-creds", "", "NATS credentials `FILE` for --nats-url")
	fl.StringVar(&f.natsSecretDir, "nats-secret-dir", "", "`DIR` of a mounted Secret whose keys nats.creds, user, password, token and ca.crt, those present, authenticate to --nats-url")
	fl.StringVar(&f.natsCA, "nats-ca", "", "PEM `FILE` of the CA that signed the NATS servers' certificates")
	fl.IntVar(&f.streamReplicas, "stream-replicas", 1, "copies of each stream a JetStream cluster keeps (3 survives the loss of a node)")
	fl.BoolVar(&f.fsync, "fsync", false, "fsync every event to disk before answering 202 (embedded server); the same as --durability fsync")
	fl.StringVar(&f.durability, "durability", "", "when an event is stored: file (written to the store's files, flushed to disk within two minutes) or fsync (fsynced before 202); default file, or runtime.durability of knc.yaml")
	fl.IntVar(&f.ttl, "ttl", 0, "knativebrokerttl a Broker's ingress gives an event that arrives without one, 1 to 255 (default 255, or runtime.ttl of knc.yaml)")
	fl.IntVar(&f.ingressShards, "ingress-shards", 0, "ingress streams per Broker and Channel, stored and routed in parallel, with no ordering across them (default 1)")
	fl.StringVar(&f.clusterName, "cluster-name", "", "make the embedded server a node of the JetStream cluster `NAME` (with --cluster-addr and --cluster-routes)")
	fl.StringVar(&f.clusterAddr, "cluster-addr", "", "`HOST:PORT` the other nodes of the cluster connect to")
	fl.StringSliceVar(&f.clusterRoutes, "cluster-routes", nil, "`URL`s of the cluster's nodes, nats-route://HOST:PORT (repeat or separate with commas)")
	fl.StringVar(&f.serverName, "server-name", "", "unique, stable name of this node in the cluster (default: $POD_NAME, else the host name)")
	fl.StringVar(&f.tracingEndpoint, "tracing-endpoint", "", "export OpenTelemetry spans to the OTLP receiver at `URL` (http:// or https://) or HOST:PORT (default: runtime.tracing.endpoint of knc.yaml, else $OTEL_EXPORTER_OTLP_ENDPOINT; none: no spans)")
	fl.StringVar(&f.tracingProtocol, "tracing-protocol", "", "OTLP protocol: http (protobuf over HTTP) or grpc (default http, or $OTEL_EXPORTER_OTLP_PROTOCOL)")
	fl.BoolVar(&f.tracingInsecure, "tracing-insecure", false, "send spans without TLS to a --tracing-endpoint given as HOST:PORT")
	fl.Float64Var(&f.tracingSampling, "tracing-sampling-ratio", 1, "share of new traces sampled, 0 to 1; a request with a traceparent follows its sender's decision")
	fl.StringToStringVar(&f.tracingHeaders, "tracing-header", nil, "`NAME=VALUE` header sent with each export (repeat or separate with commas)")
	fl.IntVar(&f.uiRecentEvents, "ui-recent-events", 0, "keep the attributes (never the data) of the last `N` events each Trigger or Subscription matched, shown by the page at /ui, at most 1000 (default 0: none, or runtime.ui.recentEvents of knc.yaml)")
}

// serveUI makes opts serve the live page at /ui, of the engine that eng
// returns once it exists: on the admin listener, or on the HTTP listener
// without one. It keeps the last events of each route when
// --ui-recent-events, else runtime.ui.recentEvents of cfg, asks for them.
//
// draw, when set, returns the graph knc graph makes of the project a table
// was compiled from, nil when it does not know the table.
func (f *serveFlags) serveUI(cmd *cobra.Command, opts *engine.Options, cfg *project.Config, eng func() *engine.Engine, draw func(*routing.Table) *topology.Graph) error {
	n := 0
	if cfg != nil && cfg.Runtime != nil && cfg.Runtime.UI != nil && cfg.Runtime.UI.RecentEvents != nil {
		n = int(*cfg.Runtime.UI.RecentEvents)
	}
	if cmd.Flags().Changed("ui-recent-events") {
		if f.uiRecentEvents < 0 || f.uiRecentEvents > ui.MaxRecentEvents {
			return usageError("--ui-recent-events must be between 0 and %d, not %d", ui.MaxRecentEvents, f.uiRecentEvents)
		}
		n = f.uiRecentEvents
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	recent := ui.NewRecent(n)
	if recent != nil {
		// Set only when on: a nil *Recent in the interface would be
		// called on every event.
		opts.Matched = recent
	}
	opts.UI = ui.New(ui.Inputs{
		Table: func() *routing.Table {
			if e := eng(); e != nil {
				return e.Table()
			}
			return nil
		},
		Statuses: func() []status.Report {
			if e := eng(); e != nil {
				return e.Statuses()
			}
			return nil
		},
		Gatherer: opts.Registry,
		Recent:   recent,
		Graph:    draw,
		Draw:     layout.WriteSVGContext,
	})
	return nil
}

// tracingConfig is runtime.tracing of cfg, when there is one, overridden
// by the tracing flags given.
func (f *serveFlags) tracingConfig(cmd *cobra.Command, cfg *project.Config) (tracing.Config, error) {
	var c tracing.Config
	if cfg != nil && cfg.Runtime != nil && cfg.Runtime.Tracing != nil {
		t := cfg.Runtime.Tracing
		c = tracing.Config{Endpoint: t.Endpoint, Protocol: t.Protocol, Insecure: t.Insecure, SamplingRatio: t.SamplingRatio, Headers: t.Headers}
	}
	fl := cmd.Flags()
	if fl.Changed("tracing-endpoint") {
		if err := tracing.CheckEndpoint(f.tracingEndpoint); err != nil {
			return c, usageError("--tracing-endpoint: %v", err)
		}
		c.Endpoint = f.tracingEndpoint
	}
	if fl.Changed("tracing-protocol") {
		if f.tracingProtocol != tracing.ProtocolGRPC && f.tracingProtocol != tracing.ProtocolHTTP {
			return c, usageError("--tracing-protocol must be grpc or http, not %q", f.tracingProtocol)
		}
		c.Protocol = f.tracingProtocol
	}
	if fl.Changed("tracing-insecure") {
		c.Insecure = f.tracingInsecure
	}
	if fl.Changed("tracing-sampling-ratio") {
		if f.tracingSampling < 0 || f.tracingSampling > 1 {
			return c, usageError("--tracing-sampling-ratio must be between 0 and 1, not %g", f.tracingSampling)
		}
		c.SamplingRatio = &f.tracingSampling
	}
	if fl.Changed("tracing-header") {
		if c.Headers == nil {
			c.Headers = map[string]string{}
		}
		maps.Copy(c.Headers, f.tracingHeaders)
	}
	if err := c.Validate(); err != nil {
		return c, usageError("tracing: %v", err)
	}
	return c, nil
}

// startTracing returns the Tracer the engine makes spans with, nil when
// tracing is off, and says where spans go. Export errors go to log.
func startTracing(ctx context.Context, stderr io.Writer, log *slog.Logger, c tracing.Config) (*tracing.Tracer, error) {
	tr, err := tracing.New(ctx, c)
	if err != nil {
		return nil, &exitError{code: exitTrouble, err: err}
	}
	if tr != nil {
		tracing.LogErrors(log, tracing.ErrorLogInterval)
		fmt.Fprintf(stderr, "knc: exporting spans %s\n", c)
	}
	return tr, nil
}

// tracerShutdownTimeout bounds sending the spans still pending at exit.
const tracerShutdownTimeout = 5 * time.Second

// stopTracing sends the spans still pending, once the engine has stopped.
func stopTracing(tr *tracing.Tracer, log *slog.Logger) {
	if tr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracerShutdownTimeout)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		log.Warn("could not send the last spans", "error", err)
	}
}

// apply sets the engine options the flags give. configURL is runtime.nats.url
// of knc.yaml, used when --nats-url is not given.
func (f *serveFlags) apply(o *engine.Options, configURL string) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(engine.GCPercent)
	}
	o.Limits = f.limits
	if (f.tlsCert == "") != (f.tlsKey == "") {
		return usageError("--tls-cert and --tls-key go together")
	}
	if f.tlsCert != "" {
		o.TLS = &ingress.TLSFiles{CertFile: f.tlsCert, KeyFile: f.tlsKey}
	}
	if f.tokenReload <= 0 {
		return usageError("--bearer-tokens-reload-interval must be positive, not %s", f.tokenReload)
	}
	if f.bearerTokens != "" {
		// Problems with single files are logged once the runtime serves.
		tokens, _, err := readBearerTokens(f.bearerTokens)
		if err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
		o.BearerTokens = tokens
	}
	url := f.natsURL
	if url == "" {
		url = configURL
	}
	if url != "" {
		if f.clusterName != "" {
			return usageError("--cluster-name makes the embedded server a cluster node; it does not go with --nats-url")
		}
		o.NATS = engine.ExternalNATS{
			URL:        url,
			CredsFile:  f.natsCreds,
			RootCAFile: f.natsCA,
			User:       os.Getenv(envNATSUser),
			Password:   os.Getenv(envNATSPassword),
			Token:      os.Getenv(envNATSToken),
		}
		if f.natsSecretDir != "" {
			if err := readNATSSecret(f.natsSecretDir, &o.NATS); err != nil {
				return &exitError{code: exitTrouble, err: err}
			}
		}
	}
	if f.clusterName != "" {
		name := f.serverName
		if name == "" {
			name = os.Getenv("POD_NAME")
		}
		if name == "" {
			name, _ = os.Hostname()
		}
		if f.clusterAddr == "" || len(f.clusterRoutes) == 0 || name == "" {
			return usageError("--cluster-name needs --cluster-addr, --cluster-routes and a server name")
		}
		o.Cluster = &natsserver.Cluster{Name: f.clusterName, ServerName: name, ListenAddr: f.clusterAddr, Routes: f.clusterRoutes}
	}
	if f.streamReplicas < 1 || f.streamReplicas > 5 {
		return usageError("--stream-replicas must be between 1 and 5, not %d", f.streamReplicas)
	}
	o.StreamReplicas = f.streamReplicas
	switch engine.Durability(f.durability) {
	case "":
		if f.fsync {
			o.Durability = engine.DurabilityFsync
		}
	case engine.DurabilityFile:
		if f.fsync {
			return usageError("--fsync and --durability file contradict each other")
		}
		o.Durability = engine.DurabilityFile
	case engine.DurabilityFsync:
		o.Durability = engine.DurabilityFsync
	default:
		return usageError("--durability must be file or fsync, not %q", f.durability)
	}
	if f.ttl != 0 {
		if f.ttl < 1 || f.ttl > 255 {
			return usageError("--ttl must be between 1 and 255, not %d", f.ttl)
		}
		o.DefaultTTL = int32(f.ttl)
	}
	if f.ingressShards < 0 || f.ingressShards > engine.MaxIngressShards {
		return usageError("--ingress-shards must be between 1 and %d, not %d", engine.MaxIngressShards, f.ingressShards)
	}
	o.IngressShards = f.ingressShards
	return nil
}

// configDurability is runtime.durability of knc.yaml, when there is one.
func configDurability(cfg *project.Config) engine.Durability {
	if cfg == nil || cfg.Runtime == nil {
		return ""
	}
	return engine.Durability(cfg.Runtime.Durability)
}

// readBearerTokens reads a directory of token files, as a Secret mounted
// as a volume presents its keys: broker.NAMESPACE.NAME or
// channel.NAMESPACE.NAME, each holding one token a line. A misnamed file
// is skipped; a token file that is empty, blank, unreadable or not a
// regular file (a FIFO is refused, never waited on) names its ingress
// with no token, which keeps that ingress protected (ingress.BearerTokens).
// Both are described in problems, so that one stray file never stops the
// others, revocations included, from applying; err is for a directory
// that cannot be read.
func readBearerTokens(dir string) (tokens ingress.BearerTokens, problems []tokenProblem, err error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("bearer tokens: %w", err)
	}
	tokens = ingress.BearerTokens{}
	for _, ent := range entries {
		name := ent.Name()
		// A mounted Secret also holds ..data and timestamped directories.
		if strings.HasPrefix(name, ".") || ent.IsDir() {
			continue
		}
		file := filepath.Join(dir, name)
		kind, rest, ok := strings.Cut(name, ".")
		ns, obj, ok2 := strings.Cut(rest, ".")
		var path string
		switch {
		case !ok || !ok2 || ns == "" || obj == "":
		case kind == "broker":
			path = routing.BrokerPath(ns, obj)
		case kind == "channel":
			path = routing.ChannelPath(ns, obj)
		}
		if path == "" {
			problems = append(problems, tokenProblem{msg: fmt.Sprintf("%s: name it broker.NAMESPACE.NAME or channel.NAMESPACE.NAME", file)})
			continue
		}
		b, err := safeio.ReadFile(file, maxTokenFileBytes)
		if err != nil {
			problems = append(problems, tokenProblem{msg: err.Error(), unreadable: true})
			tokens[path] = nil
			continue
		}
		var list []string
		for line := range strings.SplitSeq(string(bytes.TrimSpace(b)), "\n") {
			if line = strings.TrimSpace(line); line != "" {
				list = append(list, line)
			}
		}
		if len(list) == 0 {
			problems = append(problems, tokenProblem{msg: fmt.Sprintf("%s holds no token", file), unreadable: true})
		}
		tokens[path] = list
	}
	return tokens, problems, nil
}

// tokenProblem describes a file of the bearer token directory that gave
// no token: misnamed, or a token file that cannot be read.
type tokenProblem struct {
	msg        string
	unreadable bool
}

// maxTokenFileBytes bounds a token file: a few tokens, one a line.
const maxTokenFileBytes = 1 << 20

// DefaultTokenReloadInterval is how often the bearer token directory is
// read again by default; the kubelet updates a mounted Secret within
// about a minute.
const DefaultTokenReloadInterval = 10 * time.Second

// watchTokens gives eng the tokens of the --bearer-tokens directory each
// time they change, until ctx ends, and says what is wrong with the
// directory at start and each time that changes: files skipped, tokens
// for an ingress the runtime does not serve, no tokens at all.
func (f *serveFlags) watchTokens(ctx context.Context, eng *engine.Engine, log *slog.Logger) {
	if f.bearerTokens == "" || eng == nil {
		return
	}
	last, lastProblems, _ := readBearerTokens(f.bearerTokens)
	f.reportTokens(eng, log, last, lastProblems)
	tick := time.NewTicker(f.tokenReload)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		tokens, problems, err := readBearerTokens(f.bearerTokens)
		if err != nil {
			log.Error("reading the bearer tokens failed; the previous ones stay in force", "error", err)
			continue
		}
		changed := !reflect.DeepEqual(tokens, last)
		if changed {
			eng.SetBearerTokens(tokens)
			log.Info("bearer tokens reloaded", "ingresses", len(tokens))
		}
		if changed || !slices.Equal(problems, lastProblems) {
			f.reportTokens(eng, log, tokens, problems)
		}
		last, lastProblems = tokens, problems
	}
}

func (f *serveFlags) reportTokens(eng *engine.Engine, log *slog.Logger, tokens ingress.BearerTokens, problems []tokenProblem) {
	for _, p := range problems {
		if p.unreadable {
			log.Warn("bearer token file cannot be read; its ingress keeps its previous tokens, or refuses every request if it has none", "problem", p.msg)
		} else {
			log.Warn("bearer token file skipped; the other files apply", "problem", p.msg)
		}
	}
	if len(tokens) == 0 {
		log.Warn("the bearer token directory holds no tokens: every ingress accepts requests without one", "dir", f.bearerTokens)
		return
	}
	served := map[string]bool{}
	for _, o := range eng.Statuses() {
		switch {
		case o.Kind == "Broker":
			served[routing.BrokerPath(o.Metadata.Namespace, o.Metadata.Name)] = true
		case strings.HasSuffix(o.Kind, "Channel"):
			served[routing.ChannelPath(o.Metadata.Namespace, o.Metadata.Name)] = true
		}
	}
	for _, path := range slices.Sorted(maps.Keys(tokens)) {
		if !served[path] {
			log.Warn("bearer tokens for an ingress this runtime does not serve; check the file's name", "path", path)
		}
	}
}

// configNATSURL is runtime.nats.url of knc.yaml, when there is one.
func configNATSURL(cfg *project.Config) string {
	if cfg == nil || cfg.Runtime == nil || cfg.Runtime.NATS == nil {
		return ""
	}
	return cfg.Runtime.NATS.URL
}

// readNATSSecret completes x with the keys of a NATS credentials Secret
// mounted at dir: nats.creds (a credentials file), user and password,
// token, and ca.crt. Keys that are absent are left alone.
func readNATSSecret(dir string, x *engine.ExternalNATS) error {
	if _, err := os.Stat(dir); err != nil {
		return fmt.Errorf("NATS credentials: %w", err)
	}
	file := func(name string) (string, bool) {
		p := filepath.Join(dir, name)
		_, err := os.Stat(p)
		return p, err == nil
	}
	value := func(name string) (string, error) {
		p, ok := file(name)
		if !ok {
			return "", nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return "", fmt.Errorf("NATS credentials: %w", err)
		}
		return strings.TrimSpace(string(b)), nil
	}
	if p, ok := file("nats.creds"); ok {
		x.CredsFile = p
	}
	if p, ok := file("ca.crt"); ok {
		x.RootCAFile = p
	}
	for name, dst := range map[string]*string{"user": &x.User, "password": &x.Password, "token": &x.Token} {
		v, err := value(name)
		if err != nil {
			return err
		}
		if v != "" {
			*dst = v
		}
	}
	return nil
}
