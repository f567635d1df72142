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
//	knc_deliveries_kept_total{reason}    it failed and was stored as a kept letter
//	knc_deliveries_dropped_total{reason} it was given up
//
// so that, per target, once nothing is pending:
//
//	knc_deliveries_accepted_total = delivered + dead_lettered + Σ kept{reason ≠ dead-lettered} + Σ dropped{reason ≠ kept-letters-full}
//
// A target that asks for copies (knc.dev/keep-dead-lettered) also keeps a
// letter of each delivery its dead-letter sink accepted, counted
// kept{reason="dead-lettered"}: a copy, not an outcome, since the delivery
// is counted dead_lettered.
//
// A kept letter is what became of a delivery; the letter itself can later
// leave the store: evicted, oldest first, to make room for a newer one when
// its namespace's store is full (dropped{reason="kept-letters-full"}, the
// only drop that is not an outcome of a delivery: the letter was counted
// kept), expired (knc_kept_letters_expired_total) or purged
// (knc_kept_letters_purged_total). A letter too large for the store at all
// is counted kept and evicted at once. So, per target:
//
//	Σ kept = letters held + dropped{reason="kept-letters-full"} + expired + purged
//
// Replaying a letter leaves it in the store, marked, and makes a new
// delivery, counted accepted again and in knc_deliveries_replayed_total.
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
	kept         *prometheus.CounterVec
	replayed     *prometheus.CounterVec
	purged       *prometheus.CounterVec
	expired      *prometheus.CounterVec
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
		kept: newCounterVec(reg, "knc_deliveries_kept_total",
			"Deliveries that failed and were stored as kept letters, by reason, to be seen and replayed with knc dlq.",
			slices.Concat(targetLabels, []string{"reason"})),
		replayed: newCounterVec(reg, "knc_deliveries_replayed_total",
			"Kept letters replayed to their Trigger or Subscription: each is a new delivery, also counted accepted.",
			targetLabels),
		purged: newCounterVec(reg, "knc_kept_letters_purged_total",
			"Kept letters deleted with knc dlq purge.",
			targetLabels),
		expired: newCounterVec(reg, "knc_kept_letters_expired_total",
			"Kept letters removed because they were older than the store keeps them.",
			targetLabels),
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
	// Replayed, Purged and Expired count what became of its kept letters.
	Replayed, Purged, Expired prometheus.Counter
	dropped, kept             *prometheus.CounterVec
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
		Replayed:     a.replayed.WithLabelValues(l...),
		Purged:       a.purged.WithLabelValues(l...),
		Expired:      a.expired.WithLabelValues(l...),
		dropped:      a.dropped,
		kept:         a.kept,
	}
}

// ForLetter accounts for the target a kept letter names: the Broker or
// Channel (sourceKind "broker" or "channel") namespace/source and its
// Trigger or Subscription target, whether or not the current plan serves
// them.
func (m *Set) ForLetter(sourceKind, namespace, source, target string) *Target {
	s := &Source{accounting: m.accounting, labels: []string{namespace, sourceKind, source}}
	return s.bind(target)
}

// Name is the name t is counted under: its Trigger's or Subscription's,
// or its subject token when this process never served it.
func (t *Target) Name() string { return t.labels[4] }

// Keep counts a delivery to t kept as a letter for reason.
func (t *Target) Keep(reason string) {
	l := t.labels
	t.kept.WithLabelValues(l[0], l[1], l[2], l[3], l[4], reason).Inc()
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
