package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
	"github.com/knc-dev/knc/runtime/resolve"
	"github.com/knc-dev/knc/runtime/router"
	"github.com/knc-dev/knc/runtime/tracing"
)

// SourceKind tells Brokers from Channels.
type SourceKind uint8

const (
	KindBroker SourceKind = iota
	KindChannel
)

func (k SourceKind) String() string {
	if k == KindChannel {
		return "channel"
	}
	return "broker"
}

// Plan is one routing table made ready to serve: paths and subjects mapped to
// sources, filters compiled, destinations resolved. A plan is immutable;
// Reload swaps in a new one, and each request or message reads the plan
// current when it starts.
type Plan struct {
	table    *routing.Table
	resolved resolve.Results
	byPath   map[string]*Source
	byID     map[string]*Source
	sources  []*Source
}

// Source is a Broker or a Channel.
type Source struct {
	kind  SourceKind
	obj   routing.Source
	path  string
	names Names
	// matcher selects the targets of a Broker; nil for a Channel, whose
	// every target gets every event.
	matcher *router.Matcher
	targets []*Target
	byToken map[string]*Target
	metrics *metrics.Source
	// endpoint is its ingress.
	endpoint *ingress.Endpoint
	// lane makes the first attempts of its deliveries.
	lane *Lane
	// trace names it in spans; nil when tracing is off (setTracing).
	trace *tracing.Source
}

// Target is a Trigger or a Subscription.
type Target struct {
	kind  string // knative.KindTrigger or knative.KindSubscription
	obj   routing.Source
	token string
	// deliverURL is the subscriber, or for a Subscription with a reply but no
	// subscriber, the reply.
	deliverURL string
	// replyURL is where a Subscription sends its subscriber's replies; ""
	// drops them. A Trigger's replies go back to its Broker.
	replyURL      string
	deadLetterURL string
	// keepDeadLettered keeps a copy of each delivery the dead-letter sink
	// accepted as a kept letter (knc.dev/keep-dead-lettered).
	keepDeadLettered bool
	delivery         *routing.Delivery
	// header is what every request of the target carries when its event
	// has no pass-through headers: Kn-Namespace, the target's namespace,
	// as Knative's dispatcher sends it. It is shared and never modified.
	header http.Header
	// ready is false while a destination is unresolved; its events are then
	// held in the hold stages instead of being delivered.
	ready    bool
	notReady string
	account  *metrics.Target
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

func (t *Target) retry() int {
	if t.delivery == nil {
		return 0
	}
	return int(t.delivery.Retry)
}

func (t *Target) format() string {
	if t.delivery == nil || t.delivery.Format == "" {
		return routing.FormatBinary
	}
	return t.delivery.Format
}

// omittedExtension is the extension a delivery to the target's subscriber
// leaves out: Knative's Broker filter removes knativebrokerttl before it
// delivers to a Trigger's subscriber.
func (t *Target) omittedExtension() string {
	if t.kind == knative.KindTrigger {
		return ingress.ExtensionTTL
	}
	return ""
}

func (t *Target) timeout(def time.Duration) time.Duration {
	if t.delivery != nil && t.delivery.Timeout > 0 {
		return time.Duration(t.delivery.Timeout)
	}
	return def
}

// Serving is what the sources of a plan are served with.
type Serving struct {
	Metrics *metrics.Set
	// Endpoint makes the ingress of a source; ingress.Server.Endpoint is
	// one.
	Endpoint      func(broker bool, key, path string, subjects []string, accepted prometheus.Counter) *ingress.Endpoint
	IngressShards int
	// Lanes holds the lane of every source served so far, by Names.ID;
	// BuildPlan adds those of new sources. A reloaded source keeps its
	// lane, whose slots bound the first attempts of both plans.
	Lanes map[string]*Lane
	// Work is the context of the attempts made on new lanes.
	Work                context.Context
	DeliveryConcurrency int
	// Tracing prepares the names of spans (Processor's Tracer is set).
	Tracing bool
	Log     *slog.Logger
}

// BuildPlan compiles t and prepares its sources to be served. It fails on
// filters that do not compile; unresolved destinations are not errors but
// targets that are not ready.
func BuildPlan(t *routing.Table, resolved resolve.Results, sv Serving) (*Plan, error) {
	m := sv.Metrics
	p := &Plan{table: t, resolved: resolved, byPath: map[string]*Source{}, byID: map[string]*Source{}}
	var errs []error
	// Destinations are resolved per object, so two Triggers (or
	// Subscriptions) of one name would share their subscriber; Kubernetes
	// forbids it, and so does the runtime.
	seen := map[string]string{}
	unique := func(kind string, o routing.Source, owner string) {
		key := kind + " " + o.Key()
		if prev, ok := seen[key]; ok {
			errs = append(errs, fmt.Errorf("%s %s appears under both %s and %s", kind, o.Key(), prev, owner))
			return
		}
		seen[key] = owner
	}
	add := func(s *Source) {
		if prev, ok := p.byID[s.names.ID]; ok {
			errs = append(errs, fmt.Errorf("%s %s and %s %s map to the same stream name", prev.kind, prev.obj.Key(), s.kind, s.obj.Key()))
			return
		}
		s.metrics = m.ForSource(s.names.ID, s.kind.String(), s.obj)
		for _, t := range s.targets {
			t.account = s.metrics.ForTarget(t.token, t.obj.Name)
		}
		p.byID[s.names.ID] = s
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
		s := &Source{kind: KindBroker, obj: b.Source, path: b.Path, names: NamesFor(KindBroker, b.Source), matcher: matcher}
		for j := range b.Triggers {
			tr := &b.Triggers[j]
			unique(knative.KindTrigger, tr.Source, "broker "+b.Key())
			tg := &Target{kind: knative.KindTrigger, obj: tr.Source, token: token(tr.Source), delivery: tr.Delivery, keepDeadLettered: tr.KeepDeadLettered, header: namespaceHeader(tr.Namespace)}
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
		s := &Source{kind: KindChannel, obj: c.Source, path: c.Path, names: NamesFor(KindChannel, c.Source)}
		for j := range c.Subscriptions {
			sub := &c.Subscriptions[j]
			unique(knative.KindSubscription, sub.Source, "channel "+c.Key())
			tg := &Target{kind: knative.KindSubscription, obj: sub.Source, token: token(sub.Source), delivery: sub.Delivery, keepDeadLettered: sub.KeepDeadLettered, header: namespaceHeader(sub.Namespace)}
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
	perTarget := TargetSlots(sv.DeliveryConcurrency)
	for _, src := range p.sources {
		subjects := make([]string, sv.IngressShards)
		for i := range subjects {
			subjects[i], _ = src.names.IngressShard(i)
		}
		src.endpoint = sv.Endpoint(src.kind == KindBroker, src.obj.Key(), src.path, subjects, src.metrics.Accepted)
		src.lane = sv.Lanes[src.names.ID]
		if src.lane == nil {
			src.lane = NewLane(sv.Work, sv.DeliveryConcurrency)
			sv.Lanes[src.names.ID] = src.lane
		}
		if sv.Tracing {
			src.setTracing()
		}
		for _, tg := range src.targets {
			tg.slots = make(chan struct{}, perTarget)
			if !tg.ready {
				sv.Log.Warn("holding events until its destinations resolve", "kind", tg.kind, "name", tg.obj.Key(), "reason", tg.notReady)
			}
		}
	}
	return p, nil
}

// Sources are the Brokers and Channels of p.
func (p *Plan) Sources() []*Source { return p.sources }

// Source returns the source whose Names.ID is id, or nil.
func (p *Plan) Source(id string) *Source { return p.byID[id] }

// ForPath returns the source whose ingress is at path, or nil.
func (p *Plan) ForPath(path string) *Source { return p.byPath[path] }

// Table is the routing table p serves.
func (p *Plan) Table() *routing.Table { return p.table }

// Resolved are the destinations of p's table.
func (p *Plan) Resolved() resolve.Results { return p.resolved }

// Kind tells whether s is a Broker or a Channel.
func (s *Source) Kind() SourceKind { return s.kind }

// Object is the Broker or Channel.
func (s *Source) Object() routing.Source { return s.obj }

// Names are the NATS names of its streams and subjects.
func (s *Source) Names() Names { return s.names }

// Endpoint is its ingress.
func (s *Source) Endpoint() *ingress.Endpoint { return s.endpoint }

// Target returns the Trigger or Subscription of s named by token in
// subjects, or nil.
func (s *Source) Target(token string) *Target { return s.byToken[token] }

// Targets are its Triggers or Subscriptions.
func (s *Source) Targets() []*Target { return s.targets }

// CountAccepted counts an event stored in the ingress stream of s other
// than through its Endpoint: a PingSource's.
func (s *Source) CountAccepted() { s.metrics.Accepted.Inc() }

// DropUnreadable counts n events of s that JetStream lost from its files.
func (s *Source) DropUnreadable(n int) { s.metrics.DropN(metrics.DropUnreadable, n) }

// Describe names t in logs: its kind and namespace/name.
func (t *Target) Describe() (kind, key string) { return t.kind, t.obj.Key() }

// Token names t in subjects.
func (t *Target) Token() string { return t.token }

// goneTarget stands for the target of s with subject token tok, which
// the current plan does not serve any more: it names it as this process
// last knew it, and counts for it.
func (s *Source) goneTarget(tok string) *Target {
	account := s.metrics.ForToken(tok)
	kind := knative.KindTrigger
	if s.kind == KindChannel {
		kind = knative.KindSubscription
	}
	return &Target{kind: kind, obj: routing.Source{Namespace: s.obj.Namespace, Name: account.Name()}, token: tok, account: account}
}

func lookup(resolved resolve.Results, t *Target, field string, problems []error) (string, []error) {
	res, ok := resolved.Lookup(t.kind, t.obj, field)
	if !ok {
		return "", problems
	}
	if res.Err != nil {
		return "", append(problems, fmt.Errorf("%s: %w", field, res.Err))
	}
	return res.URL, problems
}

func (t *Target) setReady(problems []error) {
	t.ready = len(problems) == 0
	if !t.ready {
		t.notReady = errors.Join(problems...).Error()
	}
}

func (s *Source) index() error {
	s.byToken = make(map[string]*Target, len(s.targets))
	for _, t := range s.targets {
		if prev, ok := s.byToken[t.token]; ok {
			return fmt.Errorf("%s %s: %s and %s map to the same subject", s.kind, s.obj.Key(), prev.obj.Key(), t.obj.Key())
		}
		s.byToken[t.token] = t
	}
	return nil
}

// HoldFilter returns the subjects the unpark stage of s consumes: the hold
// subjects of its ready targets, or none when no target is ready.
func (s *Source) HoldFilter() []string {
	if s.UnparksAll() {
		// Wildcards also release the events of targets that were deleted,
		// which the dispatcher then drops and counts.
		return []string{s.names.Prefix + StageHoldSend + ".*", s.names.Prefix + StageHoldDead + ".*"}
	}
	var subjects []string
	for _, t := range s.targets {
		if t.ready {
			subjects = append(subjects, s.names.Subject(StageHoldSend, t.token), s.names.Subject(StageHoldDead, t.token))
		}
	}
	return subjects
}

// UnparksAll reports whether the unpark stage of s follows every hold
// subject, those of deleted targets included.
func (s *Source) UnparksAll() bool {
	for _, t := range s.targets {
		if !t.ready {
			return false
		}
	}
	return len(s.targets) > 0
}

// CountReplayed counts a kept letter replayed to t: a new delivery,
// accepted now, whose outcome its attempts will count.
func (t *Target) CountReplayed() {
	t.account.Accepted.Inc()
	t.account.Replayed.Inc()
}

// CountReplayedIntoSource counts a letter of t replayed into its Broker
// rather than delivered to t again, as a reply beyond its TTL is: the
// deliveries it makes are accepted on the Triggers it matches, t's among
// them, so t counts only the replay.
func (t *Target) CountReplayedIntoSource() {
	t.account.Replayed.Inc()
}
