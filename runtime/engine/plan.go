package engine

import (
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/router"
	"github.com/knc-dev/knc/runtime/routing"
	"github.com/knc-dev/knc/runtime/tracing"
)

// sourceKind tells Brokers from Channels.
type sourceKind uint8

const (
	kindBroker sourceKind = iota
	kindChannel
)

func (k sourceKind) String() string {
	if k == kindChannel {
		return "channel"
	}
	return "broker"
}

// plan is one routing table made ready to serve: paths and subjects mapped to
// sources, filters compiled, destinations resolved. A plan is immutable;
// Reload swaps in a new one, and each request or message reads the plan
// current when it starts.
type plan struct {
	table    *routing.Table
	resolved resolve.Results
	byPath   map[string]*source
	byID     map[string]*source
	sources  []*source
}

// source is a Broker or a Channel.
type source struct {
	kind  sourceKind
	obj   routing.Object
	path  string
	names sourceNames
	// matcher selects the targets of a Broker; nil for a Channel, whose
	// every target gets every event.
	matcher *router.Matcher
	targets []*target
	byToken map[string]*target
	metrics *sourceMetrics
	// endpoint is its ingress.
	endpoint *ingress.Endpoint
	// lane makes the first attempts of its deliveries.
	lane *lane
	// trace names it in spans; nil when tracing is off (setTracing).
	trace *tracing.Source
}

// target is a Trigger or a Subscription.
type target struct {
	kind  string // knative.KindTrigger or knative.KindSubscription
	obj   routing.Object
	token string
	// deliverURL is the subscriber, or for a Subscription with a reply but no
	// subscriber, the reply.
	deliverURL string
	// replyURL is where a Subscription sends its subscriber's replies; ""
	// drops them. A Trigger's replies go back to its Broker.
	replyURL      string
	deadLetterURL string
	delivery      *routing.Delivery
	// header is what every request of the target carries when its event
	// has no pass-through headers: Kn-Namespace, the target's namespace,
	// as Knative's dispatcher sends it. It is shared and never modified.
	header http.Header
	// ready is false while a destination is unresolved; its events are then
	// held in the hold stages instead of being delivered.
	ready    bool
	notReady string
	account  *targetAccount
	// slots bound the first attempts in progress to the target (see
	// lane.acquire); congestedUntil (Unix nanoseconds) is set when it had
	// none free for a while.
	slots          chan struct{}
	congestedUntil atomic.Int64
	// trace names it in spans; nil when tracing is off (setTracing).
	trace *tracing.Target
}

func namespaceHeader(namespace string) http.Header {
	return http.Header{cehttp.HeaderNamespace: {namespace}}
}

func (t *target) retry() int {
	if t.delivery == nil {
		return 0
	}
	return int(t.delivery.Retry)
}

func (t *target) format() string {
	if t.delivery == nil || t.delivery.Format == "" {
		return routing.FormatBinary
	}
	return t.delivery.Format
}

func (t *target) timeout(def time.Duration) time.Duration {
	if t.delivery != nil && t.delivery.Timeout > 0 {
		return time.Duration(t.delivery.Timeout)
	}
	return def
}

// buildPlan compiles t. It fails on filters that do not compile; unresolved
// destinations are not errors but targets that are not ready.
func buildPlan(t *routing.Table, resolved resolve.Results, m *metrics) (*plan, error) {
	p := &plan{table: t, resolved: resolved, byPath: map[string]*source{}, byID: map[string]*source{}}
	var errs []error
	// Destinations are resolved per object, so two Triggers (or
	// Subscriptions) of one name would share their subscriber; Kubernetes
	// forbids it, and so does the runtime.
	seen := map[string]string{}
	unique := func(kind string, o routing.Object, owner string) {
		key := kind + " " + o.Key()
		if prev, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("%s %s appears under both %s and %s", kind, o.Key(), prev, owner))
			return
		}
		seen[key] = owner
	}
	add := func(s *source) {
		if prev, ok := p.byID[s.names.id]; ok {
			errs = append(errs, fmt.Errorf("%s %s and %s %s map to the same stream name", prev.kind, prev.obj.Key(), s.kind, s.obj.Key()))
			return
		}
		s.metrics = m.forSource(s.kind, s.obj)
		for _, t := range s.targets {
			t.account = m.accounting.forTarget(s, t)
		}
		p.byID[s.names.id] = s
		p.byPath[s.path] = s
		p.sources = append(p.sources, s)
	}
	for i := range t.Brokers {
		b := &t.Brokers[i]
		matcher, err := router.Compile(b.Triggers)
		if err != nil {
			errs = append(errs, fmt.Errorf("broker %s: %w", b.Key(), err))
			continue
		}
		s := &source{kind: kindBroker, obj: b.Object, path: b.Path, names: namesFor(kindBroker, b.Object), matcher: matcher}
		for j := range b.Triggers {
			tr := &b.Triggers[j]
			unique(knative.KindTrigger, tr.Object, "broker "+b.Key())
			tg := &target{kind: knative.KindTrigger, obj: tr.Object, token: token(tr.Object), delivery: tr.Delivery, header: namespaceHeader(tr.Namespace)}
			var problems []error
			tg.deliverURL, problems = lookup(resolved, tg, resolve.FieldSubscriber, problems)
			tg.deadLetterURL, problems = lookup(resolved, tg, resolve.FieldDeadLetterSink, problems)
			tg.setReady(problems)
			s.targets = append(s.targets, tg)
		}
		errs = append(errs, s.index())
		add(s)
	}
	for i := range t.Channels {
		c := &t.Channels[i]
		s := &source{kind: kindChannel, obj: c.Object, path: c.Path, names: namesFor(kindChannel, c.Object)}
		for j := range c.Subscriptions {
			sub := &c.Subscriptions[j]
			unique(knative.KindSubscription, sub.Object, "channel "+c.Key())
			tg := &target{kind: knative.KindSubscription, obj: sub.Object, token: token(sub.Object), delivery: sub.Delivery, header: namespaceHeader(sub.Namespace)}
			var problems []error
			var subscriber, reply string
			subscriber, problems = lookup(resolved, tg, resolve.FieldSubscriber, problems)
			reply, problems = lookup(resolved, tg, resolve.FieldReply, problems)
			tg.deadLetterURL, problems = lookup(resolved, tg, resolve.FieldDeadLetterSink, problems)
			if sub.Subscriber != nil {
				tg.deliverURL, tg.replyURL = subscriber, reply
			} else {
				// Only a reply: it is the subscriber, and what it answers
				// has nowhere to go.
				tg.deliverURL = reply
			}
			tg.setReady(problems)
			s.targets = append(s.targets, tg)
		}
		errs = append(errs, s.index())
		add(s)
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

func lookup(resolved resolve.Results, t *target, field string, problems []error) (string, []error) {
	res, ok := resolved.Lookup(t.kind, t.obj, field)
	if !ok {
		return "", problems
	}
	if res.Err != nil {
		return "", append(problems, fmt.Errorf("%s: %w", field, res.Err))
	}
	return res.URL, problems
}

func (t *target) setReady(problems []error) {
	t.ready = len(problems) == 0
	if !t.ready {
		t.notReady = errors.Join(problems...).Error()
	}
}

func (s *source) index() error {
	s.byToken = make(map[string]*target, len(s.targets))
	for _, t := range s.targets {
		if prev, ok := s.byToken[t.token]; ok {
			return fmt.Errorf("%s %s: %s and %s map to the same subject", s.kind, s.obj.Key(), prev.obj.Key(), t.obj.Key())
		}
		s.byToken[t.token] = t
	}
	return nil
}

// holdFilter returns the subjects the unpark stage of s consumes: the hold
// subjects of its ready targets, or none when no target is ready.
func (s *source) holdFilter() []string {
	ready := 0
	for _, t := range s.targets {
		if t.ready {
			ready++
		}
	}
	switch ready {
	case 0:
		return nil
	case len(s.targets):
		// Wildcards also release the events of targets that were deleted,
		// which the dispatcher then drops and counts.
		return []string{s.names.prefix + stageHoldSend + ".*", s.names.prefix + stageHoldDead + ".*"}
	}
	var subjects []string
	for _, t := range s.targets {
		if t.ready {
			subjects = append(subjects, s.names.subject(stageHoldSend, t.token), s.names.subject(stageHoldDead, t.token))
		}
	}
	return subjects
}
