package metrics

import (
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// Delivery accounting.
//
// A delivery is one event matched to one Trigger or Subscription: the route
// stage turns an event that matches k targets into k deliveries, each
// attempted at once or stored in the delivery stream. (An event that matches nothing makes no
// delivery; an event that matches the same subscriber twice, through two
// Triggers, makes two.) Every delivery ends in exactly one outcome:
//
//	knc_deliveries_delivered_total       the subscriber accepted it (and, for a
//	                                     Subscription with a reply, so did the reply)
//	knc_deliveries_dead_lettered_total   the dead-letter sink accepted it
//	knc_deliveries_dropped_total{reason} it was given up
//
// so that, per target, once nothing is pending:
//
//	knc_deliveries_accepted_total = delivered + dead_lettered + Σ dropped
//
// The counters live in the process: a crash loses them, and the deliveries
// pending then are counted by the next process as outcomes without an
// accepted. A delivery whose acknowledgement was lost (a crash after the
// subscriber answered, an external NATS server going away) is attempted
// again and, if accepted again, counted twice as delivered: at-least-once
// means delivered ≥ the distinct events the subscriber saw.

// targetLabels label the accounting counters: the Broker or Channel
// (namespace, kind, name) and the Trigger or Subscription (target_kind,
// target), which Knative keeps in the namespace of its Broker or Channel.
var targetLabels = []string{"namespace", "kind", "name", "target_kind", "target"}

// accounting holds the per-target counters.
type accounting struct {
	accepted     *prometheus.CounterVec
	delivered    *prometheus.CounterVec
	deadLettered *prometheus.CounterVec
	dropped      *prometheus.CounterVec
	// replies counts the replies of Triggers stored in their Broker's
	// ingress: events that entered a source without an HTTP request.
	replies *prometheus.CounterVec

	// names remembers the name of every target this process has served, by
	// source and subject token, so that the deliveries of a target a reload
	// deleted are still counted under its name.
	mu    sync.Mutex
	names map[string]string
}

func newAccounting(reg prometheus.Registerer) *accounting {
	return &accounting{
		accepted: newCounterVec(reg, "knc_deliveries_accepted_total",
			"Deliveries made by the route stage, attempted or stored: one per event per matching Trigger or Subscription.",
			targetLabels),
		delivered: newCounterVec(reg, "knc_deliveries_delivered_total",
			"Deliveries the subscriber accepted.",
			targetLabels),
		deadLettered: newCounterVec(reg, "knc_deliveries_dead_lettered_total",
			"Deliveries that failed and were accepted by the dead-letter sink.",
			targetLabels),
		dropped: newCounterVec(reg, "knc_deliveries_dropped_total",
			"Deliveries given up, by reason.",
			slices.Concat(targetLabels, []string{"reason"})),
		replies: newCounterVec(reg, "knc_replies_accepted_total",
			"Replies of Triggers stored in their Broker's ingress, to be routed like accepted events.",
			sourceLabels),
		names: map[string]string{},
	}
}

// Target is the accounting of one Trigger or Subscription, bound once per
// plan so that the hot path does no label lookups.
type Target struct {
	labels                            []string
	Accepted, Delivered, DeadLettered prometheus.Counter
	dropped                           *prometheus.CounterVec
}

// ForTarget binds the accounting of the target of s whose subject token is
// token and whose name is name.
func (s *Source) ForTarget(token, name string) *Target {
	a := s.accounting
	a.mu.Lock()
	a.names[s.id+"/"+token] = name
	a.mu.Unlock()
	return s.bind(name)
}

func (s *Source) bind(name string) *Target {
	a := s.accounting
	l := append(slices.Clip(s.labels), targetKind(s.labels[1]), name)
	return &Target{
		labels:       l,
		Accepted:     a.accepted.WithLabelValues(l...),
		Delivered:    a.delivered.WithLabelValues(l...),
		DeadLettered: a.deadLettered.WithLabelValues(l...),
		dropped:      a.dropped,
	}
}

// ForToken accounts for a target of s that is not in the current plan: its
// name if this process served it, its subject token otherwise.
func (s *Source) ForToken(token string) *Target {
	a := s.accounting
	a.mu.Lock()
	name, ok := a.names[s.id+"/"+token]
	a.mu.Unlock()
	if !ok {
		name = token
	}
	return s.bind(name)
}

// Drop counts a delivery to t given up for reason.
func (t *Target) Drop(reason string) {
	l := t.labels
	t.dropped.WithLabelValues(l[0], l[1], l[2], l[3], l[4], reason).Inc()
}

// DropN counts n deliveries to t given up for reason.
func (t *Target) DropN(reason string, n uint64) {
	if n == 0 {
		return
	}
	l := t.labels
	t.dropped.WithLabelValues(l[0], l[1], l[2], l[3], l[4], reason).Add(float64(n))
}

// targetKind is the target_kind label of the targets of a source of kind.
func targetKind(sourceKind string) string {
	if sourceKind == "channel" {
		return "subscription"
	}
	return "trigger"
}
