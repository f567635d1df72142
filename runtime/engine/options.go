package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/natsserver"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/runtime/pipeline"
	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/tracing"
)

// Defaults of Options.
const (
	DefaultHTTPAddr     = "127.0.0.1:8080"
	DefaultMaxBodyBytes = 4 << 20
	// MaxBodyBytesLimit is the largest MaxBodyBytes: NATS takes messages
	// of at most 64 MiB, and an event's headers need room beside its body.
	MaxBodyBytesLimit          = 64<<20 - 256<<10
	DefaultTTL                 = 255
	DefaultAckWait             = 15 * time.Second
	DefaultAttemptTimeout      = 30 * time.Second
	DefaultPublishTimeout      = 5 * time.Second
	DefaultDeliveryConcurrency = 128
	DefaultRouteConcurrency    = 32
	DefaultMaxAckPending       = 20000
	DefaultShutdownTimeout     = 10 * time.Second
)

// GCPercent is the garbage collector's target (GOGC) a process serving an
// Engine should run with; knc run and knc runtime set it unless GOGC is
// set. The engine's live heap is a few MiB while every event allocates a
// few KiB, so that Go's default of 100 collects dozens of times a second
// under load; 400 lets the heap grow to five times the live heap between
// collections, which costs tens of MiB and saves most of that work, and
// of the pauses that make the tail latency.
const GCPercent = 400

// Durability says when an event is stored durably enough to be answered.
type Durability string

// Durability modes; see Options.Durability.
const (
	DurabilityFile  Durability = "file"
	DurabilityFsync Durability = "fsync"
)

// MaxIngressShards bounds Options.IngressShards.
const MaxIngressShards = 64

// Options configure an Engine. Only Table and DataDir are required.
type Options struct {
	// Table is the routing table to serve.
	Table *routing.Table
	// HTTPAddr is the listen address of the HTTP listener that serves
	// every ingress, /healthz and /readyz, and /status and /metrics unless
	// AdminAddr is set. Port 0 picks a free port; Engine.URL tells which.
	HTTPAddr string
	// Listener, when set, is used instead of listening on HTTPAddr.
	Listener net.Listener
	// AdminAddr, when set, is the listen address of a second, plain HTTP
	// listener for /status, /metrics, /healthz and /readyz; the ingress
	// listener then answers 404 for /status and /metrics. Engine.AdminURL
	// tells where it is.
	AdminAddr string
	// AdminListener, when set, is used instead of listening on AdminAddr.
	AdminListener net.Listener
	// DataDir holds the JetStream files. Events accepted but not yet
	// delivered survive a restart with the same DataDir.
	DataDir string
	// MaxBodyBytes bounds an ingress request's body; larger ones get 413.
	MaxBodyBytes int64
	// DefaultTTL is the knativebrokerttl a Broker's ingress gives an event
	// that has none; each reply re-enqueued decrements it.
	DefaultTTL int32
	// AckWait is how long a message handed to a stage stays claimed before
	// JetStream offers it again: after a crash, how long undelivered events
	// wait. Attempts that take longer report progress to keep their claim.
	AckWait time.Duration
	// AttemptTimeout bounds a delivery attempt whose delivery options set no
	// timeout.
	AttemptTimeout time.Duration
	// PublishTimeout bounds waiting for JetStream to acknowledge a store;
	// an ingress answers 503 when it expires.
	PublishTimeout time.Duration
	// DeliveryConcurrency bounds, per Broker or Channel, the first attempts
	// in progress, and separately the attempts of stored deliveries;
	// RouteConcurrency bounds the ingress messages being routed.
	DeliveryConcurrency int
	RouteConcurrency    int
	// MaxAckPending bounds the deliveries per Broker or Channel that are in
	// progress or waiting for a retry.
	MaxAckPending int
	// MaxStoreBytes caps JetStream's file storage; 0 lets NATS choose. When
	// it is full, ingresses answer 503.
	MaxStoreBytes int64
	// NATSAddr, when set, also serves NATS clients over TCP there.
	NATSAddr string
	// NATS, when its URL is set, is an external NATS cluster used instead
	// of the embedded server; DataDir, MaxStoreBytes, NATSAddr, Cluster and
	// Durability are then unused.
	NATS ExternalNATS
	// Cluster, when set, makes the embedded server a node of a JetStream
	// cluster of runtimes (the pods of a StatefulSet).
	Cluster *natsserver.Cluster
	// StreamReplicas is how many nodes of a JetStream cluster keep each
	// stream; 3 survives the loss of one. 0 means 1.
	StreamReplicas int
	// Durability is DurabilityFile (the default): an event is answered 202
	// once written to JetStream's files, which the kernel writes to disk
	// within JetStream's sync interval (two minutes), so it survives the
	// runtime's crash but not the machine's; or DurabilityFsync: once
	// fsynced, so it survives both.
	Durability Durability
	// IngressShards is the number of ingress streams of each Broker and
	// Channel, 1 when 0. Events go to one shard until it has as many
	// batches in flight as it takes, then to the next, whose stores (and
	// fsyncs) run in parallel. Group commit already stores a burst of
	// events with one write, and one fsync, so that more shards help only
	// where one stream's fsyncs are slow enough to bound latency, at the
	// cost of more, smaller writes. Events of different shards are routed
	// in no particular order.
	IngressShards int
	// Limits bound what clients can take of the HTTP listener.
	Limits ingress.Limits
	// TLS, when set, serves the HTTP listener over TLS only.
	TLS *ingress.TLSFiles
	// BearerTokens, when set, are required by the ingresses they name.
	BearerTokens ingress.BearerTokens
	// ShutdownTimeout bounds the graceful drain of Run.
	ShutdownTimeout time.Duration
	// NewResolver returns the Resolver for a table served at baseURL; nil
	// resolves with resolve.NewLocal.
	NewResolver func(t *routing.Table, baseURL string) (resolve.Resolver, error)
	// Tracer, when set, makes spans of ingress requests, routing,
	// delivery attempts and replies; nil, the default, makes none. The
	// caller shuts it down after the Engine.
	Tracer *tracing.Tracer
	// StatusChanged, when set, is called after the statuses (Statuses)
	// change by themselves, not through Start, Reload or Shutdown: when the
	// store starts refusing writes, and when it takes them again. It must
	// not block.
	StatusChanged func()
	// Logger receives the runtime's logs; nil discards them.
	Logger *slog.Logger
	// Registry receives the metrics; nil creates one. The global registry
	// is never used.
	Registry *prometheus.Registry
	// Matched, when set, is told of each event a Trigger or Subscription
	// matches as the route stage routes it; nil, the default, costs
	// nothing.
	Matched MatchObserver
	// KeptMaxBytes and KeptMaxAge bound the kept letters of each
	// namespace: the deliveries that ended without success, kept to be
	// seen and replayed (knc dlq). The oldest are evicted, and counted,
	// to make room; those older than KeptMaxAge are removed, and counted.
	// With MaxStoreBytes, each namespace keeps at most a quarter of it.
	KeptMaxBytes int64
	KeptMaxAge   time.Duration
	// PingClock is the clock PingSources fire by; nil is the wall clock.
	// Tests give a ping.FileClock, which they step.
	PingClock ping.Clock
	// UI, when set, serves the live page at /ui and below (package
	// runtime/ui): on the admin listener, or on the HTTP listener when
	// there is none.
	UI http.Handler
}

// MatchObserver is told of the events routed; see Options.Matched.
type MatchObserver = pipeline.MatchObserver

func (o *Options) setDefaults() error {
	if o.Table == nil {
		return errors.New("engine: a routing table is required")
	}
	if o.DataDir == "" && o.NATS.URL == "" {
		return errors.New("engine: a data directory is required")
	}
	if o.StreamReplicas <= 0 {
		o.StreamReplicas = 1
	}
	if o.StreamReplicas > 5 {
		return fmt.Errorf("engine: stream replicas must be between 1 and 5, not %d", o.StreamReplicas)
	}
	if o.TLS != nil && (o.TLS.CertFile == "" || o.TLS.KeyFile == "") {
		return errors.New("engine: TLS needs both a certificate and a key file")
	}
	switch o.Durability {
	case "":
		o.Durability = DurabilityFile
	case DurabilityFile, DurabilityFsync:
	default:
		return fmt.Errorf("engine: durability must be %q or %q, not %q", DurabilityFile, DurabilityFsync, o.Durability)
	}
	if o.IngressShards < 0 || o.IngressShards > MaxIngressShards {
		return fmt.Errorf("engine: ingress shards must be between 1 and %d, not %d", MaxIngressShards, o.IngressShards)
	}
	if o.IngressShards == 0 {
		o.IngressShards = 1
	}
	if o.HTTPAddr == "" {
		o.HTTPAddr = DefaultHTTPAddr
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBodyBytes > MaxBodyBytesLimit {
		// Larger bodies would be read, then refused by the store: 503
		// for ever instead of 413.
		return fmt.Errorf("engine: a body limit of %d bytes is above the largest event the store takes, %d bytes (64 MiB less room for headers)", o.MaxBodyBytes, MaxBodyBytesLimit)
	}
	if o.DefaultTTL <= 0 {
		o.DefaultTTL = DefaultTTL
	}
	if o.AckWait <= 0 {
		o.AckWait = DefaultAckWait
	}
	if o.AttemptTimeout <= 0 {
		o.AttemptTimeout = DefaultAttemptTimeout
	}
	if o.PublishTimeout <= 0 {
		o.PublishTimeout = DefaultPublishTimeout
	}
	if o.DeliveryConcurrency <= 0 {
		o.DeliveryConcurrency = DefaultDeliveryConcurrency
	}
	if o.RouteConcurrency <= 0 {
		o.RouteConcurrency = DefaultRouteConcurrency
	}
	if o.MaxAckPending <= 0 {
		o.MaxAckPending = DefaultMaxAckPending
	}
	if o.KeptMaxBytes <= 0 {
		o.KeptMaxBytes = DefaultKeptMaxBytes
	}
	if o.KeptMaxAge <= 0 {
		o.KeptMaxAge = DefaultKeptMaxAge
	}
	if o.ShutdownTimeout <= 0 {
		o.ShutdownTimeout = DefaultShutdownTimeout
	}
	if o.NewResolver == nil {
		o.NewResolver = func(t *routing.Table, baseURL string) (resolve.Resolver, error) {
			return resolve.NewLocal(t, baseURL)
		}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Registry == nil {
		o.Registry = prometheus.NewRegistry()
	}
	return o.Table.Validate()
}

func (o *Options) separateAdmin() bool { return o.AdminAddr != "" || o.AdminListener != nil }
