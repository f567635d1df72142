package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// targetAccount is the accounting of one target, bound once per plan so that
// the hot path does no label lookups.
type targetAccount struct {
	labels                            []string
	accepted, delivered, deadLettered prometheus.Counter
	dropped                           *prometheus.CounterVec
}

func (a *accounting) forTarget(src *source, t *target) *targetAccount {
	a.mu.Lock()
	a.names[src.names.id+"/"+t.token] = t.obj.Name
	a.mu.Unlock()
	return a.bind(src, targetKind(src.kind), t.obj.Name)
}

func (a *accounting) bind(src *source, kind, name string) *targetAccount {
	l := []string{src.obj.Namespace, src.kind.String(), src.obj.Name, kind, name}
	return &targetAccount{
		labels:       l,
		accepted:     a.accepted.WithLabelValues(l...),
		delivered:    a.delivered.WithLabelValues(l...),
		deadLettered: a.deadLettered.WithLabelValues(l...),
		dropped:      a.dropped,
	}
}

// forToken accounts for a target that is not in the current plan: its name
// if this process served it, its subject token otherwise.
func (a *accounting) forToken(src *source, token string) *targetAccount {
	a.mu.Lock()
	name, ok := a.names[src.names.id+"/"+token]
	a.mu.Unlock()
	if !ok {
		name = token
	}
	return a.bind(src, targetKind(src.kind), name)
}

func (t *targetAccount) drop(reason string) {
	l := t.labels
	t.dropped.WithLabelValues(l[0], l[1], l[2], l[3], l[4], reason).Inc()
}

func (t *targetAccount) dropN(reason string, n uint64) {
	if n == 0 {
		return
	}
	l := t.labels
	t.dropped.WithLabelValues(l[0], l[1], l[2], l[3], l[4], reason).Add(float64(n))
}

func targetKind(k sourceKind) string {
	if k == kindChannel {
		return "subscription"
	}
	return "trigger"
}

// countStored counts as accepted the deliveries JetStream stored for the
// first time; a message it discarded as a duplicate of one stored before (a
// route retried after a partial failure) was counted then.
func countStored(src *source, matched []int, fresh []bool) {
	for i, idx := range matched {
		if fresh[i] {
			src.targets[idx].account.accepted.Inc()
		}
	}
}

// unparksAll reports whether the unpark stage of s follows every hold
// subject, those of deleted targets included.
func (s *source) unparksAll() bool {
	f := s.holdFilter()
	return len(f) > 0 && strings.HasSuffix(f[0], ".*")
}

// purgeSubject removes the messages of subject from stream and returns how
// many there were. jetstream.Stream.Purge does not return the count, which
// the accounting needs, so this makes the API request itself.
func (e *Engine) purgeSubject(ctx context.Context, stream, subject string) (uint64, error) {
	req, err := json.Marshal(struct {
		Filter string `json:"filter"`
	}{subject})
	if err != nil {
		return 0, err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.PublishTimeout)
	defer cancel()
	msg, err := e.nc.RequestWithContext(ctx, "$JS.API.STREAM.PURGE."+stream, req)
	if err != nil {
		return 0, fmt.Errorf("purging %s: %w", subject, err)
	}
	var resp struct {
		Success bool   `json:"success"`
		Purged  uint64 `json:"purged"`
		Error   *struct {
			Description string `json:"description"`
		} `json:"error"`
	}
	if err := json.Unmarshal(msg.Data, &resp); err != nil {
		return 0, fmt.Errorf("purging %s: %w", subject, err)
	}
	if resp.Error != nil {
		return 0, fmt.Errorf("purging %s: %s", subject, resp.Error.Description)
	}
	return resp.Purged, nil
}
