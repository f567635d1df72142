package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/knc-dev/knc/internal/routing"
)

// Reasons an event or delivery is dropped, the reason label of
// knc_events_dropped_total and knc_deliveries_dropped_total: what no kept
// letter holds. The reasons a delivery is kept (runtime/kept's Reason*)
// are the drop reasons of a runtime that keeps no letters.
const (
	DropNoReplyDestination = "no-reply-destination" // a Subscription without reply got a reply
	DropUnreadable         = "unreadable"           // the stored message is not an event
	// DropKeptLettersFull: a kept letter evicted, oldest first, to make
	// room in its namespace's store (see accounting.go).
	DropKeptLettersFull = "kept-letters-full"
)

// Set is the runtime's Prometheus metrics. Events are labelled by the
// Broker or Channel they entered, never by anything per event.
type Set struct {
	accepted        *prometheus.CounterVec
	delivered       *prometheus.CounterVec
	retried         *prometheus.CounterVec
	deadLettered    *prometheus.CounterVec
	dropped         *prometheus.CounterVec
	kept            *prometheus.CounterVec
	attemptDuration *prometheus.HistogramVec
	latency         *prometheus.HistogramVec
	pingTicks       *prometheus.CounterVec
	accounting      *accounting
}

// Outcomes of a PingSource's tick in this runtime (PingTick).
const (
	// PingStored: this runtime stored the tick's event (or sent it, for a
	// sink outside the table); another replica's copy is not counted.
	PingStored = "stored"
	// PingMissed: this runtime was too late to fire the tick.
	PingMissed = "missed"
	// PingLost: the event could not be stored, or its sink refused it.
	PingLost = "lost"
)

var sourceLabels = []string{"namespace", "kind", "name"}

// New registers the runtime's metrics with reg.
func New(reg *prometheus.Registry) *Set {
	m := &Set{
		accepted: newCounterVec(reg, "knc_events_accepted_total",
			"Events stored by an ingress and answered 202.",
			sourceLabels),
		delivered: newCounterVec(reg, "knc_events_delivered_total",
			"Deliveries a subscriber accepted (one per matching Trigger or Subscription).",
			sourceLabels),
		retried: newCounterVec(reg, "knc_delivery_retries_total",
			"Failed delivery attempts scheduled for a retry.",
			sourceLabels),
		deadLettered: newCounterVec(reg, "knc_events_dead_lettered_total",
			"Deliveries that failed and were accepted by the dead-letter sink.",
			sourceLabels),
		dropped: newCounterVec(reg, "knc_events_dropped_total",
			"Events or deliveries given up, by reason.",
			slices.Concat(sourceLabels, []string{"reason"})),
		kept: newCounterVec(reg, "knc_events_kept_total",
			"Deliveries that failed and were stored as kept letters, by reason.",
			slices.Concat(sourceLabels, []string{"reason"})),
		attemptDuration: newHistogramVec(reg, "knc_delivery_attempt_duration_seconds",
			"Duration of one HTTP delivery attempt, whatever its outcome.",
			prometheus.ExponentialBuckets(0.0005, 2, 16), sourceLabels),
		latency: newHistogramVec(reg, "knc_delivery_latency_seconds",
			"Time from an event's acceptance by the ingress to its successful delivery, retries included.",
			prometheus.ExponentialBuckets(0.001, 2, 18), sourceLabels),
		pingTicks: newCounterVec(reg, "knc_pingsource_ticks_total",
			"Ticks of a PingSource this runtime fired, by outcome: stored, missed (too late) or lost.",
			[]string{"namespace", "name", "outcome"}),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.accounting = newAccounting(reg)
	return m
}

// PingTick counts a tick of PingSource o with its outcome.
func (m *Set) PingTick(o routing.Source, outcome string) {
	m.pingTicks.WithLabelValues(o.Namespace, o.Name, outcome).Inc()
}

// newCounterVec makes a counter family and registers it, so that each
// family is declared once, where its field is set.
func newCounterVec(reg prometheus.Registerer, name, help string, labels []string) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	reg.MustRegister(c)
	return c
}

// newHistogramVec is newCounterVec for a histogram family.
func newHistogramVec(reg prometheus.Registerer, name, help string, buckets []float64, labels []string) *prometheus.HistogramVec {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	reg.MustRegister(h)
	return h
}

// Source are the metrics of one Broker or Channel, bound once so that
// the hot path does no label lookups.
type Source struct {
	id                                         string
	accounting                                 *accounting
	labels                                     []string
	Accepted, Delivered, Retried, DeadLettered prometheus.Counter
	AttemptDuration, Latency                   prometheus.Observer
	dropped, kept                              *prometheus.CounterVec
	// Replies counts the replies of Triggers stored in the Broker's
	// ingress.
	Replies prometheus.Counter
}

// ForSource binds the metrics of the Broker or Channel o, which id names
// among all sources; kind is "broker" or "channel".
func (m *Set) ForSource(id, kind string, o routing.Source) *Source {
	l := []string{o.Namespace, kind, o.Name}
	return &Source{
		id:              id,
		accounting:      m.accounting,
		labels:          l,
		Accepted:        m.accepted.WithLabelValues(l...),
		Delivered:       m.delivered.WithLabelValues(l...),
		Retried:         m.retried.WithLabelValues(l...),
		DeadLettered:    m.deadLettered.WithLabelValues(l...),
		AttemptDuration: m.attemptDuration.WithLabelValues(l...),
		Latency:         m.latency.WithLabelValues(l...),
		dropped:         m.dropped,
		kept:            m.kept,
		Replies:         m.accounting.replies.WithLabelValues(l...),
	}
}

// Drop counts an event of s given up for reason.
func (s *Source) Drop(reason string) {
	s.dropped.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], reason).Inc()
}

// DropN counts n events of s given up for reason.
func (s *Source) DropN(reason string, n int) {
	s.dropped.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], reason).Add(float64(n))
}

// Keep counts a delivery of s kept as a letter for reason.
func (s *Source) Keep(reason string) {
	s.kept.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], reason).Inc()
}
