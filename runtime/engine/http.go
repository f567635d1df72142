package engine

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/status"
)

// Handler serves the ingress of every Broker and Channel at its path, and:
//
//	GET /healthz   200 while the process serves HTTP
//	GET /readyz    200 once every route is programmed and NATS is connected, 503 otherwise
//	GET /status    {"items": [...]}, the Knative status of every object
//	GET /metrics   Prometheus metrics
func (e *Engine) Handler() http.Handler {
	metricsHandler := promhttp.HandlerFor(e.metrics.registry, promhttp.HandlerOpts{})
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		e.inflight.Add(1)
		defer e.inflight.Add(-1)
		switch r.URL.Path {
		case "/healthz":
			writeText(w, http.StatusOK, "ok")
		case "/readyz":
			// Without its NATS connection (an external server being
			// reconnected to) the runtime can store nothing.
			if e.ready.Load() && e.natsConnected() {
				writeText(w, http.StatusOK, "ready")
			} else {
				writeText(w, http.StatusServiceUnavailable, "not ready")
			}
		case "/status":
			e.serveStatus(w, r)
		case "/metrics":
			metricsHandler.ServeHTTP(w, r)
		default:
			e.serveIngress(w, r)
		}
	})
}

func writeText(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(msg + "\n"))
}

func (e *Engine) serveStatus(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeText(w, http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	body, err := json.MarshalIndent(struct {
		Items []status.Object `json:"items"`
	}{Items: e.Statuses()}, "", "  ")
	if err != nil {
		writeText(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = w.Write(append(body, '\n'))
}

// serveIngress stores an event for the Broker or Channel at the request's
// path and answers 202 once JetStream has acknowledged it, never before.
func (e *Engine) serveIngress(w http.ResponseWriter, r *http.Request) {
	p := e.currentPlan()
	var src *source
	if p != nil {
		src = p.byPath[r.URL.Path]
		if src == nil {
			src = p.byPath[strings.TrimSuffix(r.URL.Path, "/")]
		}
	}
	if src == nil {
		e.reject(w, http.StatusNotFound, "no broker or channel at "+r.URL.Path)
		return
	}
	switch r.Method {
	case http.MethodPost:
	case http.MethodOptions:
		// CloudEvents HTTP webhook validation (abuse protection) and
		// plain method discovery.
		w.Header().Set("Allow", "POST")
		if origin := r.Header.Get("WebHook-Request-Origin"); origin != "" {
			w.Header().Set("WebHook-Allowed-Origin", origin)
			w.Header().Set("WebHook-Allowed-Rate", "*")
		}
		w.WriteHeader(http.StatusOK)
		return
	default:
		w.Header().Set("Allow", "POST, OPTIONS")
		e.reject(w, http.StatusMethodNotAllowed, "method "+r.Method+" not allowed: send events with POST")
		return
	}
	if !e.authorized(w, r, src.path) {
		return
	}
	if !e.accepting.Load() {
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "1")
		e.reject(w, http.StatusServiceUnavailable, "not accepting events: the runtime is starting or shutting down")
		return
	}
	if !e.admit(w) {
		return
	}
	defer e.release()
	ev, err := cehttp.ReadRequest(r, e.opts.MaxBodyBytes)
	if err != nil {
		var pe *cehttp.ParseError
		switch {
		case errors.Is(err, cehttp.ErrTooLarge):
			e.reject(w, http.StatusRequestEntityTooLarge, err.Error())
		case errors.As(err, &pe):
			e.reject(w, http.StatusBadRequest, err.Error())
		case errors.Is(err, os.ErrDeadlineExceeded):
			// The body did not arrive within Limits.ReadTimeout.
			w.Header().Set("Connection", "close")
			e.reject(w, http.StatusRequestTimeout, "the request body was not received in time")
		default:
			e.reject(w, http.StatusBadRequest, "reading the request: "+err.Error())
		}
		return
	}
	if src.kind == kindBroker {
		if _, ok := ttlOf(ev); !ok {
			ev.SetExtension(ExtensionTTL, e.opts.DefaultTTL)
		}
	}
	if err := e.store(r.Context(), src, ev); err != nil {
		e.log.Warn("could not store an event", src.kind.String(), src.obj.Key(), "event", ev.ID(), "error", err)
		w.Header().Set("Retry-After", "1")
		e.reject(w, http.StatusServiceUnavailable, "the event could not be stored")
		return
	}
	src.metrics.accepted.Inc()
	w.WriteHeader(http.StatusAccepted)
}

// store adds ev to the next batch of src's ingress and waits until
// JetStream has acknowledged that batch. The batch completes, one way or
// the other, within PublishTimeout.
func (e *Engine) store(ctx context.Context, src *source, ev *event.Event) error {
	bt, err := src.batcher().store(ev, time.Now())
	if err != nil {
		return err
	}
	select {
	case <-bt.done:
		return bt.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (e *Engine) reject(w http.ResponseWriter, code int, msg string) {
	e.metrics.reject(code)
	writeText(w, code, msg)
}
