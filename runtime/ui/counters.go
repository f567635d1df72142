package ui

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// Counts are the counters of one Broker or Channel (from the knc_events_*
// and knc_delivery_retries_total series), or of one Trigger or
// Subscription (from the knc_deliveries_* series), read from the metrics
// /metrics serves.
type Counts struct {
	// Accepted is, for a Broker or Channel, the events its ingress stored
	// (knc_events_accepted_total); for a Trigger or Subscription, the
	// deliveries made for it (knc_deliveries_accepted_total).
	Accepted uint64 `json:"accepted"`
	// Delivered are the deliveries a subscriber accepted.
	Delivered uint64 `json:"delivered"`
	// Retried are the failed attempts scheduled for a retry; the runtime
	// counts them per Broker or Channel only.
	Retried uint64 `json:"retried"`
	// DeadLettered are the deliveries the dead-letter sink accepted.
	DeadLettered uint64 `json:"deadLettered"`
	// Dropped are the events or deliveries given up, whatever the reason.
	Dropped uint64 `json:"dropped"`
	// Kept are the deliveries that failed and were stored as kept letters
	// (knc dlq), every reason, copies and replies beside an outcome
	// included; NodeState.Kept has them by reason.
	Kept uint64 `json:"kept"`
	// InFlight are the deliveries made and not yet ended: accepted less
	// delivered, dead-lettered, kept and dropped, summed over the routes.
	InFlight uint64 `json:"inFlight"`
}

// The metric families the counters are read from; see
// runtime/pipeline/metrics (metrics.go and accounting.go).
const (
	metricEventsAccepted       = "knc_events_accepted_total"
	metricEventsDelivered      = "knc_events_delivered_total"
	metricEventsDeadLettered   = "knc_events_dead_lettered_total"
	metricEventsDropped        = "knc_events_dropped_total"
	metricRetries              = "knc_delivery_retries_total"
	metricDeliveriesAccepted   = "knc_deliveries_accepted_total"
	metricDeliveriesDelivered  = "knc_deliveries_delivered_total"
	metricDeliveriesDeadLetter = "knc_deliveries_dead_lettered_total"
	metricDeliveriesDropped    = "knc_deliveries_dropped_total"
	metricEventsKept           = "knc_events_kept_total"
	metricDeliveriesKept       = "knc_deliveries_kept_total"
)

// metricKinds maps the kind label of the metrics to the page's kinds.
var metricKinds = map[string]string{
	"broker": "Broker", "channel": "Channel",
	"trigger": "Trigger", "subscription": "Subscription",
}

// readCounts gathers the counters of every source and route, keyed by node
// ID, and their kept letters by reason. Counters are read from the same
// gatherer /metrics serves, so the page shows what /metrics shows at the
// same moment.
func readCounts(g prometheus.Gatherer) (map[string]*Counts, map[string]map[string]uint64, error) {
	families, err := g.Gather()
	if err != nil && len(families) == 0 {
		return nil, nil, fmt.Errorf("reading the metrics: %w", err)
	}
	counts := map[string]*Counts{}
	byReason := map[string]map[string]uint64{}
	at := func(id string) *Counts {
		c := counts[id]
		if c == nil {
			c = &Counts{}
			counts[id] = c
		}
		return c
	}
	keep := func(id, reason string, v uint64) {
		at(id).Kept += v
		if byReason[id] == nil {
			byReason[id] = map[string]uint64{}
		}
		byReason[id][reason] += v
	}
	// routes holds, per route, the deliveries made and ended, to compute
	// what is in flight once every family is read.
	type routeTotals struct {
		source         string
		accepted, done uint64
	}
	routes := map[string]*routeTotals{}
	for _, f := range families {
		name := f.GetName()
		for _, m := range f.GetMetric() {
			l := labels(m)
			kind, ok := metricKinds[l["kind"]]
			if !ok {
				continue
			}
			source := nodeID(kind, l["namespace"], l["name"])
			v := uint64(m.GetCounter().GetValue())
			switch name {
			case metricEventsAccepted:
				at(source).Accepted += v
			case metricEventsDelivered:
				at(source).Delivered += v
			case metricEventsDeadLettered:
				at(source).DeadLettered += v
			case metricEventsDropped:
				at(source).Dropped += v
			case metricRetries:
				at(source).Retried += v
			case metricEventsKept:
				keep(source, l["reason"], v)
			case metricDeliveriesAccepted, metricDeliveriesDelivered, metricDeliveriesDeadLetter, metricDeliveriesDropped, metricDeliveriesKept:
				rkind, ok := metricKinds[l["target_kind"]]
				if !ok {
					continue
				}
				// Knative keeps a Trigger or Subscription in the
				// namespace of its Broker or Channel.
				route := nodeID(rkind, l["namespace"], l["target"])
				rt := routes[route]
				if rt == nil {
					rt = &routeTotals{source: source}
					routes[route] = rt
				}
				rc := at(route)
				switch name {
				case metricDeliveriesAccepted:
					rc.Accepted += v
					rt.accepted += v
				case metricDeliveriesDelivered:
					rc.Delivered += v
					rt.done += v
				case metricDeliveriesDeadLetter:
					rc.DeadLettered += v
					rt.done += v
				case metricDeliveriesDropped:
					rc.Dropped += v
					// An evicted letter was counted kept, as the
					// outcome of its delivery.
					if l["reason"] != metrics.DropKeptLettersFull {
						rt.done += v
					}
				case metricDeliveriesKept:
					keep(route, l["reason"], v)
					if kept.Outcome(l["reason"]) {
						rt.done += v
					}
				}
			}
		}
	}
	for id, rt := range routes {
		// Outcomes counted without their acceptance (deliveries pending
		// at a crash, ended by this process) make done exceed accepted.
		if rt.accepted > rt.done {
			n := rt.accepted - rt.done
			counts[id].InFlight = n
			counts[rt.source].InFlight += n
		}
	}
	return counts, byReason, nil
}

func labels(m *dto.Metric) map[string]string {
	l := make(map[string]string, len(m.GetLabel()))
	for _, p := range m.GetLabel() {
		l[p.GetName()] = p.GetValue()
	}
	return l
}
