package engine

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/knc-dev/knc/runtime/routing"
)

// Reasons an event is dropped, the reason label of knc_events_dropped_total.
const (
	dropNoDeadLetterSink   = "no-dead-letter-sink"  // delivery failed and there is no sink
	dropDeadLetterFailed   = "dead-letter-failed"   // delivery to the sink failed too
	dropTTL                = "ttl"                  // a reply would have exceeded the TTL
	dropNoReplyDestination = "no-reply-destination" // a Subscription without reply got a reply
	dropUnrouted           = "unrouted"             // its Trigger or Subscription was deleted
	dropUnreadable         = "unreadable"           // the stored message is not an event
)

// metrics are the runtime's Prometheus metrics. Events are labelled by the
// Broker or Channel they entered, never by anything per event.
type metrics struct {
	registry        *prometheus.Registry
	accepted        *prometheus.CounterVec
	delivered       *prometheus.CounterVec
	retried         *prometheus.CounterVec
	deadLettered    *prometheus.CounterVec
	dropped         *prometheus.CounterVec
	attemptDuration *prometheus.HistogramVec
	latency         *prometheus.HistogramVec
	accounting      *accounting
}

var sourceLabels = []string{"namespace", "kind", "name"}

func newMetrics(reg *prometheus.Registry) *metrics {
	m := &metrics{
		registry: reg,
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
		attemptDuration: newHistogramVec(reg, "knc_delivery_attempt_duration_seconds",
			"Duration of one HTTP delivery attempt, whatever its outcome.",
			prometheus.ExponentialBuckets(0.0005, 2, 16), sourceLabels),
		latency: newHistogramVec(reg, "knc_delivery_latency_seconds",
			"Time from an event's acceptance by the ingress to its successful delivery, retries included.",
			prometheus.ExponentialBuckets(0.001, 2, 18), sourceLabels),
	}
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.accounting = newAccounting(reg)
	return m
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

// sourceMetrics are the metrics of one Broker or Channel, bound once so that
// the hot path does no label lookups.
type sourceMetrics struct {
	labels                                     []string
	accepted, delivered, retried, deadLettered prometheus.Counter
	attemptDuration, latency                   prometheus.Observer
	dropped                                    *prometheus.CounterVec
	replies                                    prometheus.Counter
}

func (m *metrics) forSource(kind sourceKind, o routing.Object) *sourceMetrics {
	l := []string{o.Namespace, kind.String(), o.Name}
	return &sourceMetrics{
		labels:          l,
		accepted:        m.accepted.WithLabelValues(l...),
		delivered:       m.delivered.WithLabelValues(l...),
		retried:         m.retried.WithLabelValues(l...),
		deadLettered:    m.deadLettered.WithLabelValues(l...),
		attemptDuration: m.attemptDuration.WithLabelValues(l...),
		latency:         m.latency.WithLabelValues(l...),
		dropped:         m.dropped,
		replies:         m.accounting.replies.WithLabelValues(l...),
	}
}

func (s *sourceMetrics) drop(reason string) {
	s.dropped.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], reason).Inc()
}

func (s *sourceMetrics) dropN(reason string, n int) {
	s.dropped.WithLabelValues(s.labels[0], s.labels[1], s.labels[2], reason).Add(float64(n))
}
