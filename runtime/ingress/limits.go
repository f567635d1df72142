package ingress

import (
	"crypto/tls"
	"log/slog"
	"net/http"
	"strconv"
	"time"
)

// Limits bound what clients can take of the HTTP listener, so that
// slow or too many clients cannot exhaust the runtime's memory, connections
// or goroutines. Zero fields take the defaults below.
type Limits struct {
	// MaxHeaderBytes bounds a request's headers; larger ones get 431.
	MaxHeaderBytes int
	// ReadHeaderTimeout bounds the time to read a request's headers: a
	// client that trickles them (slowloris) is disconnected after it.
	ReadHeaderTimeout time.Duration
	// ReadTimeout bounds the time to read a whole request, body included.
	ReadTimeout time.Duration
	// WriteTimeout bounds the time from the end of the headers to the end
	// of the response.
	WriteTimeout time.Duration
	// IdleTimeout closes a keep-alive connection that carries no request.
	IdleTimeout time.Duration
	// MaxConcurrentRequests bounds the ingress requests being served at
	// once; requests over it get 429 with Retry-After at once, a signal
	// CloudEvents senders and Knative retry on, instead of queueing. /metrics,
	// /status and the probes are not counted.
	MaxConcurrentRequests int
	// RetryAfter is the Retry-After of a 429 or 503 answer.
	RetryAfter time.Duration
}

// Defaults of Limits.
const (
	DefaultMaxHeaderBytes        = 64 << 10
	DefaultReadHeaderTimeout     = 10 * time.Second
	DefaultReadTimeout           = 60 * time.Second
	DefaultWriteTimeout          = 60 * time.Second
	DefaultIdleTimeout           = 120 * time.Second
	DefaultMaxConcurrentRequests = 1024
	DefaultRetryAfter            = time.Second
)

func (l *Limits) setDefaults() {
	if l.MaxHeaderBytes <= 0 {
		l.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	if l.ReadHeaderTimeout <= 0 {
		l.ReadHeaderTimeout = DefaultReadHeaderTimeout
	}
	if l.ReadTimeout <= 0 {
		l.ReadTimeout = DefaultReadTimeout
	}
	if l.WriteTimeout <= 0 {
		l.WriteTimeout = DefaultWriteTimeout
	}
	if l.IdleTimeout <= 0 {
		l.IdleTimeout = DefaultIdleTimeout
	}
	if l.MaxConcurrentRequests <= 0 {
		l.MaxConcurrentRequests = DefaultMaxConcurrentRequests
	}
	if l.RetryAfter <= 0 {
		l.RetryAfter = DefaultRetryAfter
	}
}

// retryAfter is the Retry-After header value: whole seconds, at least one.
func (l *Limits) retryAfter() string {
	return strconv.Itoa(max(1, int((l.RetryAfter+time.Second-1)/time.Second)))
}

func (s *Server) newHTTPServer(h http.Handler, tlsConfig *tls.Config) *http.Server {
	l := s.cfg.Limits
	return &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if refuseAmbiguousFraming(w, r) {
				return
			}
			h.ServeHTTP(w, r)
		}),
		ConnContext: withFramingConn,
		// net/http answers OPTIONS * itself, without the handler; the
		// framing scan counts every request, so the handler must see
		// each one, in order.
		DisableGeneralOptionsHandler: true,
		ReadHeaderTimeout:            l.ReadHeaderTimeout,
		ReadTimeout:                  l.ReadTimeout,
		WriteTimeout:                 l.WriteTimeout,
		IdleTimeout:                  l.IdleTimeout,
		MaxHeaderBytes:               l.MaxHeaderBytes,
		TLSConfig:                    tlsConfig,
		ErrorLog:                     slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
	}
}

// admit counts an ingress request in, or answers 429 and returns false when
// MaxConcurrentRequests are already being served. Every admitted request
// must call release.
func (s *Server) admit(w http.ResponseWriter) bool {
	if s.ingressInflight.Add(1) > int64(s.cfg.Limits.MaxConcurrentRequests) {
		s.ingressInflight.Add(-1)
		w.Header().Set("Retry-After", s.cfg.Limits.retryAfter())
		s.reject(w, http.StatusTooManyRequests, "too many requests in progress; retry later")
		return false
	}
	return true
}

func (s *Server) release() { s.ingressInflight.Add(-1) }
