package ingress

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/status"
	"github.com/knc-dev/knc/runtime/tracing"
)

// Runtime is what the HTTP listener asks of the runtime it serves, on each
// request.
type Runtime interface {
	// Endpoint returns the ingress served at path in the current routing
	// table, nil when there is none.
	Endpoint(path string) *Endpoint
	// Accepting reports whether events are taken: not while the runtime
	// starts or shuts down.
	Accepting() bool
	// Ready returns nil when every route is programmed and the store
	// takes events, else why not (GET /readyz answers 503 with it).
	Ready() error
	// Statuses returns the status of every object of the table (GET
	// /status).
	Statuses() []status.Report
}

// Config configures a Server.
type Config struct {
	// MaxBodyBytes bounds an ingress request's body; larger ones get 413.
	MaxBodyBytes int64
	// DefaultTTL is the knativebrokerttl a Broker's ingress gives an event
	// that has none.
	DefaultTTL int32
	// PublishTimeout bounds waiting for the store to acknowledge a batch;
	// an ingress answers 503 when it expires.
	PublishTimeout time.Duration
	// OneCommitAcrossShards makes the ingress shards of a Broker or
	// Channel store one batch at a time, in turn, instead of one each at
	// once: with fsync durability, fewer and larger fsyncs.
	OneCommitAcrossShards bool
	// Limits bound what clients can take of the HTTP listener.
	Limits Limits
	// TLS, when set, serves the HTTP listener over TLS only.
	TLS *TLSFiles
	// BearerTokens, when set, are required by the ingresses they name.
	BearerTokens BearerTokens
	// SeparateAdmin keeps /status and /metrics off the ingress listener:
	// only the admin listener (ServeAdmin) serves them, and the ingress
	// listener answers 404 there. Clients that may send events are not
	// thereby allowed to read the status of every object or the metrics.
	SeparateAdmin bool
	Logger        *slog.Logger
	// Tracer, when set, makes a span of each request that brings an
	// event; nil makes none.
	Tracer *tracing.Tracer
	// Registry receives knc_ingress_rejected_total and is served at
	// /metrics.
	Registry *prometheus.Registry
	// UI, when set, serves /ui and the paths below it where /status is
	// served: never on the ingress listener with SeparateAdmin.
	UI http.Handler
	// Kept, when set, serves the kept-letter API (/dlq/...) on the admin
	// listener only, to requests with a bearer token of AdminTokenPath
	// (see authorizedAdmin).
	Kept http.Handler
}

// Server is the HTTP listener of the runtime: the ingress of every Broker
// and Channel, the probes, and /status and /metrics unless they have a
// listener of their own (Config.SeparateAdmin, ServeAdmin). It answers an
// event 202 only once the store has acknowledged it.
type Server struct {
	cfg      Config
	log      *slog.Logger
	runtime  Runtime
	store    Store
	rejected *prometheus.CounterVec
	tokens   atomic.Pointer[tokenState]
	// tokenMu orders SetBearerTokens calls, each of which builds on the
	// tokens of the previous one.
	tokenMu sync.Mutex
	// tokensUnread is 1 for each ingress whose bearer tokens could not
	// be read.
	tokensUnread *prometheus.GaugeVec
	// inflight counts the HTTP requests being served; ingressInflight the
	// ingress requests among them, bounded by Limits.MaxConcurrentRequests.
	inflight        atomic.Int64
	ingressInflight atomic.Int64

	httpServer *http.Server
	// lean serves the plain-HTTP connections it can, before net/http;
	// nil over TLS.
	lean        *leanServer
	adminServer *http.Server // nil without ServeAdmin
	done        chan error

	// batchers group the events of each ingress subject into batches. A
	// source served again by a new table keeps its batchers: the batches
	// in flight bound the next ones.
	mu       sync.Mutex
	batchers map[string]*batcher

	tlsMetrics *tlsMetrics // nil without TLS
}

// New returns a Server that stores events in store; Serve starts it.
func New(cfg Config, runtime Runtime, store Store) *Server {
	cfg.Limits.setDefaults()
	s := &Server{
		cfg:     cfg,
		log:     cfg.Logger,
		runtime: runtime,
		store:   store,
		rejected: newCounterVec(cfg.Registry, "knc_ingress_rejected_total",
			"Ingress requests not accepted, by HTTP status code.", "code"),
		done:     make(chan error, 1),
		batchers: map[string]*batcher{},
		tokensUnread: prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "knc_ingress_bearer_tokens_unreadable",
			Help: "1 for each ingress whose bearer tokens cannot be read; fallback is previous (its last tokens stay in force) or refuse (it refuses every request)."},
			[]string{"ingress", "fallback"}),
	}
	cfg.Registry.MustRegister(s.tokensUnread)
	if cfg.BearerTokens != nil {
		s.SetBearerTokens(cfg.BearerTokens)
	}
	if cfg.TLS != nil {
		s.tlsMetrics = newTLSMetrics(cfg.Registry)
	}
	return s
}

func newCounterVec(reg prometheus.Registerer, name, help string, labels ...string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	reg.MustRegister(c)
	return c
}

// LoadTLS reads the certificate files of Config.TLS, nil without them.
func (s *Server) LoadTLS() (*tls.Config, error) {
	if s.cfg.TLS == nil {
		return nil, nil
	}
	return newTLSConfig(*s.cfg.TLS, s.log, s.tlsMetrics)
}

// Serve serves ln, over TLS when tlsConfig is set, until Stop, and returns
// the base URL events are sent to.
func (s *Server) Serve(ln net.Listener, tlsConfig *tls.Config) string {
	url := baseURL(ln.Addr())
	s.httpServer = s.newHTTPServer(s.Handler(), tlsConfig)
	if tlsConfig != nil {
		url = "https" + strings.TrimPrefix(url, "http")
		// net/http must see the *tls.Conn itself (for HTTP/2 and the
		// request's TLS state), so over TLS the framing is not scanned,
		// and a request with both headers is only followed by closing
		// the connection.
		ln = tls.NewListener(ln, s.httpServer.TLSConfig)
	} else {
		// Plain connections go to the lean server first, which hands
		// net/http those it does not serve itself, already wrapped in
		// a framingConn.
		s.lean = newLeanServer(s.httpServer.Handler, s.cfg.Limits, s.log, s.httpServer, ln.Addr())
		go func(lean *leanServer, ln net.Listener) {
			if err := lean.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				s.done <- err
			}
		}(s.lean, ln)
		ln = s.lean.fallback
	}
	go func(srv *http.Server, ln net.Listener) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.done <- err
		}
	}(s.httpServer, ln)
	return url
}

// Done receives the error that ended serving, if one did.
func (s *Server) Done() <-chan error { return s.done }

// Serving reports whether Serve was called.
func (s *Server) Serving() bool { return s.httpServer != nil }

// baseURL is the URL events are sent to; a wildcard listen address is
// reported as loopback, which is where a local runtime is reached.
func baseURL(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok {
		return "http://" + addr.String()
	}
	host := tcp.IP
	if host == nil || host.IsUnspecified() {
		if host.To4() == nil && host != nil {
			host = net.IPv6loopback
		} else {
			host = net.IPv4(127, 0, 0, 1)
		}
	}
	return "http://" + net.JoinHostPort(host.String(), fmt.Sprint(tcp.Port))
}

// Stop closes the listener, waits for the requests in progress (an ingress
// waits at most PublishTimeout for the store), then closes every
// connection. http.Server.Shutdown alone would also wait up to five seconds
// for connections a client opened but never sent a request on.
func (s *Server) Stop(ctx context.Context) error {
	hctx, cancel := context.WithTimeout(ctx, s.cfg.PublishTimeout+time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.httpServer.Shutdown(hctx) }()
	if s.lean != nil {
		s.lean.Shutdown()
	}
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for s.inflight.Load() > 0 && hctx.Err() == nil {
		select {
		case <-tick.C:
		case <-hctx.Done():
		}
	}
	_ = s.httpServer.Close()
	if s.lean != nil {
		s.lean.Close()
	}
	var adminErr error
	if s.adminServer != nil {
		// Nothing on the admin listener is worth waiting for.
		adminErr = s.adminServer.Close()
	}
	if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("stopping the HTTP server: %w", err)
	}
	if adminErr != nil {
		return fmt.Errorf("stopping the admin HTTP server: %w", adminErr)
	}
	return nil
}

// Handler serves the ingress of every Broker and Channel at its path, and:
//
//	GET /healthz   200 while the process serves HTTP
//	GET /readyz    200 once every route is programmed and the store takes events, 503 with the reason otherwise
//	GET /status    {"items": [...]}, the Knative status of every object
//	GET /metrics   Prometheus metrics
//	GET /ui        the live page, with Config.UI
//
// With Config.SeparateAdmin, /status, /metrics and /ui answer 404 here and
// are served by AdminHandler only.
func (s *Server) Handler() http.Handler {
	admin := s.AdminHandler()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		closeAfterChunked(w, r)
		if s.cfg.UI != nil && isUIPath(r.URL.Path) {
			// Not counted in flight: Stop would wait for the page's
			// event stream, which never ends by itself. Stop closes its
			// connection instead.
			if s.cfg.SeparateAdmin {
				writeText(w, http.StatusNotFound, "/ui is served on the admin listener only")
				return
			}
			s.cfg.UI.ServeHTTP(w, r)
			return
		}
		if isKeptPath(r.URL.Path) {
			writeText(w, http.StatusNotFound, r.URL.Path+" is served on the admin listener only (--admin-addr)")
			return
		}
		s.inflight.Add(1)
		defer s.inflight.Add(-1)
		switch {
		case isProbePath(r.URL.Path):
			admin.ServeHTTP(w, r)
		case isReportPath(r.URL.Path):
			if s.cfg.SeparateAdmin {
				writeText(w, http.StatusNotFound, r.URL.Path+" is served on the admin listener only")
				return
			}
			admin.ServeHTTP(w, r)
		default:
			s.serveIngress(w, r)
		}
	})
}

// isIngressPath reports whether Handler surely serves path as the ingress
// of a Broker or Channel: not a probe, a report, /ui or /dlq, which it
// serves otherwise (or, with the live page off, as an ingress that is not
// there). The lean server serves only these paths.
func isIngressPath(path string) bool {
	return !isProbePath(path) && !isReportPath(path) && !isUIPath(path) && !isKeptPath(path)
}

func isProbePath(path string) bool { return path == "/healthz" || path == "/readyz" }

// isReportPath reports whether path is /status or /metrics, which the
// admin listener alone serves with Config.SeparateAdmin.
func isReportPath(path string) bool { return path == "/status" || path == "/metrics" }

// closeAfterChunked closes an HTTP/1 connection after the answer to a
// request with a Transfer-Encoding. net/http frames such a request by its
// chunks and drops a Content-Length sent with it before a handler sees it,
// so the two headers together cannot be told from chunked alone; a proxy
// in front that framed it by the Content-Length would pass what follows
// the chunks as part of the body, and a request hidden there would be
// served on the same connection. RFC 9112 section 6.1 requires closing the
// connection after such a request; chunked senders only lose keep-alive.
func closeAfterChunked(w http.ResponseWriter, r *http.Request) {
	if r.ProtoMajor == 1 && len(r.TransferEncoding) > 0 {
		w.Header().Set("Connection", "close")
	}
}

// AdminHandler serves /healthz, /readyz, /status and /metrics, and 404 for
// every other path: no event is taken on it.
func (s *Server) AdminHandler() http.Handler {
	metricsHandler := promhttp.HandlerFor(s.cfg.Registry, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		closeAfterChunked(w, r)
		switch r.URL.Path {
		case "/healthz":
			writeText(w, http.StatusOK, "ok")
		case "/readyz":
			// Tokens that cannot be read are told, not made a failure:
			// they concern one ingress, which fails closed by itself, and
			// a 503 would take every ingress of the runtime out of
			// service.
			msg := "ready"
			if trouble := s.tokenTrouble(); trouble != "" {
				msg += "\n" + trouble
			}
			if err := s.runtime.Ready(); err != nil {
				writeText(w, http.StatusServiceUnavailable, "not ready: "+err.Error())
			} else {
				writeText(w, http.StatusOK, msg)
			}
		case "/status":
			s.serveStatus(w, r)
		case "/metrics":
			metricsHandler.ServeHTTP(w, r)
		default:
			if s.cfg.UI != nil && isUIPath(r.URL.Path) {
				s.cfg.UI.ServeHTTP(w, r)
				return
			}
			if s.cfg.Kept != nil && isKeptPath(r.URL.Path) {
				if s.authorizedAdmin(w, r) {
					s.cfg.Kept.ServeHTTP(w, r)
				}
				return
			}
			writeText(w, http.StatusNotFound, "not found: the admin listener serves /healthz, /readyz, /status and /metrics")
		}
	})
}

// unavailable answers 503 with the configured Retry-After: the event was
// not taken, and a client that retries it later loses nothing.
func (s *Server) unavailable(w http.ResponseWriter, msg string) {
	w.Header().Set("Retry-After", s.cfg.Limits.retryAfter())
	s.reject(w, http.StatusServiceUnavailable, msg)
}

// isUIPath reports whether the page of Config.UI serves path. Brokers and
// Channels are served under /brokers/ and /channels/, so none is hidden.
func isUIPath(path string) bool { return path == "/ui" || strings.HasPrefix(path, "/ui/") }

// SetKept serves h as Config.Kept; call it before Serve.
func (s *Server) SetKept(h http.Handler) { s.cfg.Kept = h }

// isKeptPath reports whether path is of the kept-letter API.
func isKeptPath(path string) bool { return path == "/dlq" || strings.HasPrefix(path, "/dlq/") }

// ServeAdmin serves AdminHandler on ln, in plain HTTP, until Stop, and
// returns its base URL. Call it before Serve.
func (s *Server) ServeAdmin(ln net.Listener) string {
	s.adminServer = s.newHTTPServer(s.AdminHandler(), nil)
	ln = framingListener{ln}
	go func(srv *http.Server, ln net.Listener) {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			select {
			case s.done <- fmt.Errorf("admin listener: %w", err):
			default:
			}
		}
	}(s.adminServer, ln)
	return baseURL(ln.Addr())
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

func (s *Server) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeText(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	body, err := json.MarshalIndent(struct {
		Items []status.Report `json:"items"`
	}{Items: status.Redacted(s.runtime.Statuses())}, "", "  ")
	if err != nil {
		writeText(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

// serveIngress stores an event for the Broker or Channel at the request's
// path and answers 202 once JetStream has acknowledged it, never before.
func (s *Server) serveIngress(w http.ResponseWriter, r *http.Request) {
	ep := s.runtime.Endpoint(r.URL.Path)
	if ep == nil {
		ep = s.runtime.Endpoint(strings.TrimSuffix(r.URL.Path, "/"))
	}
	if ep == nil && !s.runtime.Accepting() {
		// Until the routes are set up no path is known: a 404 would tell
		// a client that retries on 503 to give up on a Broker that is
		// about to exist.
		s.unavailable(w, "not accepting events: the runtime is starting or shutting down")
		return
	}
	if ep == nil {
		s.reject(w, http.StatusNotFound, "no broker or channel at "+r.URL.Path)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodOptions:
		// CloudEvents HTTP webhook validation (abuse protection) and
		// plain method discovery, answered as Knative's ingress answers
		// it: any origin, any rate.
		origin := r.Header.Get("WebHook-Request-Origin")
		if origin == "" {
			origin = "*"
		}
		w.Header().Set("Allow", "POST, OPTIONS")
		w.Header().Set("WebHook-Allowed-Origin", origin)
		w.Header().Set("WebHook-Allowed-Rate", "*")
		w.WriteHeader(http.StatusOK)
		return
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		s.reject(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: send events with POST")
		return
	}
	if !s.authorized(w, r, ep.path) {
		return
	}
	if !s.runtime.Accepting() {
		w.Header().Set("Connection", "close")
		s.unavailable(w, "not accepting events: the runtime is starting or shutting down")
		return
	}
	if err := s.store.Fault(); err != nil {
		s.unavailable(w, "the event cannot be stored now: "+err.Error())
		return
	}
	if !s.admit(w) {
		return
	}
	defer s.release()
	var start time.Time
	if s.cfg.Tracer != nil {
		start = time.Now()
	}
	ev, err := cehttp.ReadRequest(r, s.cfg.MaxBodyBytes)
	if err != nil {
		var pe *cehttp.ParseError
		switch {
		case errors.Is(err, cehttp.ErrTooLarge):
			s.reject(w, http.StatusRequestEntityTooLarge, err.Error())
		case errors.As(err, &pe):
			s.reject(w, http.StatusBadRequest, err.Error())
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The body did not arrive within Limits.ReadTimeout. The write
			// deadline, counted from the end of the headers, has passed too
			// unless WriteTimeout is well above ReadTimeout (the defaults
			// are equal): without time of its own, the 408 is never sent
			// and the client sees the connection closed.
			_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(timeoutAnswerTime))
			w.Header().Set("Connection", "close")
			s.reject(w, http.StatusRequestTimeout, "the request body was not received in time")
		default:
			s.reject(w, http.StatusBadRequest, "reading the request: "+err.Error())
		}
		return
	}
	// The span starts once there is an event to name; requests refused
	// before are counted in knc_ingress_rejected_total alone.
	var span tracing.Span
	var spanCtx context.Context
	if tr := s.cfg.Tracer; tr != nil {
		spanCtx, span = tr.StartIngress(r.Header, ev, ep.trace, start)
	}
	if ep.broker {
		// Knative's ingress decrements the TTL an event comes with and
		// refuses it when that reaches 0: it is looping.
		ttl, ok := TTL(ev)
		if !ok {
			ttl = s.cfg.DefaultTTL + 1
		}
		if ttl--; ttl <= 0 {
			s.reject(w, http.StatusBadRequest, "knativebrokerttl is exhausted: the event has gone round a reply loop too often")
			span.EndIngress(http.StatusBadRequest, nil)
			return
		}
		ev.SetExtension(ExtensionTTL, ttl)
	}
	passThrough := cehttp.PassThrough(r.Header)
	if spanCtx != nil {
		// What is stored carries the ingress span's context, which the
		// route stage's span is a child of.
		if passThrough == nil {
			passThrough = http.Header{}
		}
		tracing.Inject(spanCtx, passThrough)
	}
	if err := s.storeEvent(ep, ev, cehttp.EncodeHeader(passThrough)); err != nil {
		s.log.Warn("could not store an event", ep.kind, ep.key, "event", ev.ID(), "error", err)
		s.unavailable(w, "the event could not be stored")
		span.EndIngress(http.StatusServiceUnavailable, err)
		return
	}
	ep.accepted.Inc()
	w.WriteHeader(http.StatusAccepted)
	span.EndIngress(http.StatusAccepted, nil)
}

// storeEvent adds ev to the next batch of ep and waits until JetStream has
// acknowledged that batch. The batch completes, one way or the other,
// within PublishTimeout, so the request waits for it alone even when its
// client has gone: a select with the request's context would cost every
// event more than the wait it could spare a few.
func (s *Server) storeEvent(ep *Endpoint, ev *event.Event, passThrough string) error {
	bt, err := ep.batcher().store(ev, time.Now(), passThrough)
	if err != nil {
		return err
	}
	<-bt.done
	return bt.err
}

// timeoutAnswerTime is how long the 408 to a body that came too slowly
// may take to write: a few hundred bytes.
const timeoutAnswerTime = 5 * time.Second

func (s *Server) reject(w http.ResponseWriter, code int, msg string) {
	s.rejected.WithLabelValues(strconv.Itoa(code)).Inc()
	writeText(w, code, msg)
}
