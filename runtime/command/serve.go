package command

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

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/internal/safeio"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/natsserver"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/runtime/status"
	"github.com/knc-dev/knc/runtime/tracing"
	"github.com/knc-dev/knc/runtime/ui"
)

// Apply sets the engine options c gives: the listeners, the store, the
// ingress limits, TLS, the bearer tokens and where JetStream runs.
func Apply(o *engine.Options, c *runtimeconfig.Config) error {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(engine.GCPercent)
	}
	o.HTTPAddr = c.HTTPAddr
	o.AdminAddr = c.AdminAddr
	o.DataDir = c.DataDir
	o.MaxBodyBytes = c.MaxBodyBytes
	o.AckWait = c.AckWait
	o.MaxStoreBytes = c.MaxStoreBytes
	o.NATSAddr = c.NATSAddr
	o.ShutdownTimeout = c.ShutdownTimeout
	if c.TestClockFile != "" {
		o.PingClock = ping.FileClock{Path: c.TestClockFile}
	}
	o.Limits = ingress.Limits{
		MaxHeaderBytes:        c.MaxHeaderBytes,
		ReadHeaderTimeout:     c.ReadHeaderTimeout,
		ReadTimeout:           c.ReadTimeout,
		WriteTimeout:          c.WriteTimeout,
		IdleTimeout:           c.IdleTimeout,
		MaxConcurrentRequests: c.MaxConcurrentRequests,
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return UsageError("--tls-cert and --tls-key go together")
	}
	if c.TLSCert != "" {
		o.TLS = &ingress.TLSFiles{CertFile: c.TLSCert, KeyFile: c.TLSKey}
	}
	if c.BearerTokensReloadInterval <= 0 {
		return UsageError("--bearer-tokens-reload-interval must be positive, not %s", c.BearerTokensReloadInterval)
	}
	if c.BearerTokens != "" {
		// Problems with single files are logged once the runtime serves.
		tokens, _, err := readBearerTokens(c.BearerTokens)
		if err != nil {
			return &ExitError{Code: ExitTrouble, Err: err}
		}
		o.BearerTokens = tokens
	}
	if c.NATSURL != "" {
		if c.ClusterName != "" {
			return UsageError("--cluster-name makes the embedded server a cluster node; it does not go with --nats-url")
		}
		o.NATS = engine.ExternalNATS{
			URL:        c.NATSURL,
			CredsFile:  c.NATSCreds,
			RootCAFile: c.NATSCA,
			User:       c.NATSUser,
			Password:   c.NATSPassword,
			Token:      c.NATSToken,
		}
		if c.NATSSecretDir != "" {
			if err := readNATSSecret(c.NATSSecretDir, &o.NATS); err != nil {
				return &ExitError{Code: ExitTrouble, Err: err}
			}
		}
	}
	if c.ClusterName != "" {
		name := c.ServerName
		if name == "" {
			name = c.PodName
		}
		if name == "" {
			name, _ = os.Hostname()
		}
		if c.ClusterAddr == "" || len(c.ClusterRoutes) == 0 || name == "" {
			return UsageError("--cluster-name needs --cluster-addr, --cluster-routes and a server name")
		}
		o.Cluster = &natsserver.Cluster{Name: c.ClusterName, ServerName: name, ListenAddr: c.ClusterAddr, Routes: c.ClusterRoutes}
	}
	if c.StreamReplicas < 1 || c.StreamReplicas > 5 {
		return UsageError("--stream-replicas must be between 1 and 5, not %d", c.StreamReplicas)
	}
	o.StreamReplicas = c.StreamReplicas
	switch engine.Durability(c.Durability) {
	case "":
		if c.Fsync {
			o.Durability = engine.DurabilityFsync
		}
	case engine.DurabilityFile:
		if c.Fsync {
			return UsageError("--fsync and --durability file contradict each other")
		}
		o.Durability = engine.DurabilityFile
	case engine.DurabilityFsync:
		o.Durability = engine.DurabilityFsync
	default:
		return UsageError("--durability must be file or fsync, not %q", c.Durability)
	}
	if c.TTL != 0 {
		if c.TTL < 1 || c.TTL > 255 {
			return UsageError("--ttl must be between 1 and 255, not %d", c.TTL)
		}
		o.DefaultTTL = int32(c.TTL)
	}
	if c.IngressShards < 0 || c.IngressShards > engine.MaxIngressShards {
		return UsageError("--ingress-shards must be between 1 and %d, not %d", engine.MaxIngressShards, c.IngressShards)
	}
	o.IngressShards = c.IngressShards
	if c.KeptMaxBytes <= 0 || c.KeptMaxAge <= 0 {
		return UsageError("--kept-max-bytes and --kept-max-age must be above 0, not %d and %s", c.KeptMaxBytes, c.KeptMaxAge)
	}
	o.KeptMaxBytes, o.KeptMaxAge = c.KeptMaxBytes, c.KeptMaxAge
	return nil
}

// ServeUI makes opts serve the live page at /ui, of the engine that eng
// returns once it exists: on the admin listener, or on the HTTP listener
// without one. It keeps the last events of each route that
// --ui-recent-events asks for.
//
// graph, when set, returns the graph knc graph makes of the project a
// table was compiled from, nil when it does not know the table; draw,
// when set, lays out the page's drawing.
func ServeUI(opts *engine.Options, c *runtimeconfig.Config, eng func() *engine.Engine, graph func(*routing.Table) *topology.Graph, draw ui.Draw) error {
	if c.UIRecentEvents < 0 || c.UIRecentEvents > ui.MaxRecentEvents {
		return UsageError("--ui-recent-events must be between 0 and %d, not %d", ui.MaxRecentEvents, c.UIRecentEvents)
	}
	if opts.Registry == nil {
		opts.Registry = prometheus.NewRegistry()
	}
	recent := ui.NewRecent(c.UIRecentEvents)
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
		Graph:    graph,
		Draw:     draw,
	})
	return nil
}

// TracingConfig is the tracing c asks for.
func TracingConfig(c *runtimeconfig.Config) (tracing.Config, error) {
	t := tracing.Config{
		Endpoint: c.TracingEndpoint,
		Protocol: c.TracingProtocol,
		Insecure: c.TracingInsecure,
		Headers:  c.TracingHeaders,
	}
	if c.Given("tracing-endpoint") || t.Endpoint != "" {
		if err := tracing.CheckEndpoint(t.Endpoint); err != nil {
			return t, UsageError("--tracing-endpoint: %v", err)
		}
	}
	if t.Protocol != "" && t.Protocol != tracing.ProtocolGRPC && t.Protocol != tracing.ProtocolHTTP {
		return t, UsageError("--tracing-protocol must be grpc or http, not %q", t.Protocol)
	}
	if c.Given("tracing-sampling-ratio") {
		r := c.TracingSamplingRatio
		if r < 0 || r > 1 {
			return t, UsageError("--tracing-sampling-ratio must be between 0 and 1, not %g", r)
		}
		t.SamplingRatio = &r
	}
	if err := t.Validate(); err != nil {
		return t, UsageError("tracing: %v", err)
	}
	return t, nil
}

// startTracing returns the Tracer the engine makes spans with, nil when
// tracing is off, and says where spans go. Export errors go to log.
func StartTracing(ctx context.Context, stderr io.Writer, log *slog.Logger, c tracing.Config) (*tracing.Tracer, error) {
	tr, err := tracing.New(ctx, c)
	if err != nil {
		return nil, &ExitError{Code: ExitTrouble, Err: err}
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
func StopTracing(tr *tracing.Tracer, log *slog.Logger) {
	if tr == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), tracerShutdownTimeout)
	defer cancel()
	if err := tr.Shutdown(ctx); err != nil {
		log.Warn("could not send the last spans", "error", err)
	}
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
		case name == adminTokenFile:
			path = ingress.AdminTokenPath
		case !ok || !ok2 || ns == "" || obj == "":
		case kind == "broker":
			path = routing.BrokerPath(ns, obj)
		case kind == "channel":
			path = routing.ChannelPath(ns, obj)
		}
		if path == "" {
			problems = append(problems, tokenProblem{msg: fmt.Sprintf("%s: name it broker.NAMESPACE.NAME, channel.NAMESPACE.NAME or %s", file, adminTokenFile)})
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

// adminTokenFile is the file of the bearer token directory whose tokens
// authorise the kept-letter API of the admin listener (knc dlq).
const adminTokenFile = "admin"

// tokenProblem describes a file of the bearer token directory that gave
// no token: misnamed, or a token file that cannot be read.
type tokenProblem struct {
	msg        string
	unreadable bool
}

// maxTokenFileBytes bounds a token file: a few tokens, one a line.
const maxTokenFileBytes = 1 << 20

// WatchTokens gives eng the tokens of the --bearer-tokens directory each
// time they change, until ctx ends, and says what is wrong with the
// directory at start and each time that changes: files skipped, tokens
// for an ingress the runtime does not serve, no tokens at all.
func WatchTokens(ctx context.Context, c *runtimeconfig.Config, eng *engine.Engine, log *slog.Logger) {
	if c.BearerTokens == "" || eng == nil {
		return
	}
	watchTokens(ctx, c.BearerTokens, c.BearerTokensReloadInterval, eng, log)
}

// tokenHolder is what watchTokens gives tokens to: the engine.
type tokenHolder interface {
	SetBearerTokens(ingress.BearerTokens)
	Statuses() []status.Report
}

func watchTokens(ctx context.Context, dir string, every time.Duration, eng tokenHolder, log *slog.Logger) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	var last ingress.BearerTokens
	var lastProblems []tokenProblem
	// The first pass gives the engine what the directory holds now: the
	// engine holds the tokens read when its options were made, before it
	// started, and a file replaced since (a Secret rotated while the
	// runtime started) would otherwise wait for the next change.
	for first := true; ; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
		}
		tokens, problems, err := readBearerTokens(dir)
		if err != nil {
			log.Error("reading the bearer tokens failed; the previous ones stay in force", "error", err)
			continue
		}
		changed := first || !reflect.DeepEqual(tokens, last)
		if changed {
			eng.SetBearerTokens(tokens)
			if !first {
				log.Info("bearer tokens reloaded", "ingresses", len(tokens))
			}
		}
		if changed || !slices.Equal(problems, lastProblems) {
			reportTokens(dir, eng, log, tokens, problems)
		}
		last, lastProblems = tokens, problems
	}
}

func reportTokens(dir string, eng tokenHolder, log *slog.Logger, tokens ingress.BearerTokens, problems []tokenProblem) {
	for _, p := range problems {
		if p.unreadable {
			log.Warn("bearer token file cannot be read; its ingress keeps its previous tokens, or refuses every request if it has none", "problem", p.msg)
		} else {
			log.Warn("bearer token file skipped; the other files apply", "problem", p.msg)
		}
	}
	if len(tokens) == 0 {
		log.Warn("the bearer token directory holds no tokens: every ingress accepts requests without one", "dir", dir)
		return
	}
	served := map[string]bool{ingress.AdminTokenPath: true}
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
