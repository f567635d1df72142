package engine

import (
	"time"

	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/status"
)

// ingressRuntime is the Engine as its HTTP listener sees it.
type ingressRuntime Engine

func (r *ingressRuntime) Endpoint(path string) *ingress.Endpoint {
	p := (*Engine)(r).currentPlan()
	if p == nil {
		return nil
	}
	if src := p.ForPath(path); src != nil {
		return src.Endpoint()
	}
	return nil
}

func (r *ingressRuntime) Accepting() bool { return r.accepting.Load() }

func (r *ingressRuntime) Ready() error { return (*Engine)(r).notReady() }

func (r *ingressRuntime) Statuses() []status.Report { return (*Engine)(r).Statuses() }

// ingressStore is the Engine's JetStream as the ingress stores events in
// it. The ingress is made with the Engine, before Start connects to NATS.
type ingressStore Engine

func (s *ingressStore) Publish(m *nats.Msg, deadline time.Time, done func(err error, duplicate bool)) {
	s.acks.Publish(m, deadline, done)
}

func (s *ingressStore) MaxPayload() int64 { return s.acks.MaxPayload() }

func (s *ingressStore) Fault() error { return (*Engine)(s).storeFault() }
