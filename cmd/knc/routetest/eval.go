package routetest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/runtime/router"
)

// MaxHops bounds how often an event is forwarded or answered within one
// case: a chain longer than this is a loop the case cannot settle.
const MaxHops = 32

// Outcome is what one case's event did against one routing table.
type Outcome struct {
	// Reached are the names of the Triggers or Subscriptions of the
	// target the event reached, sorted.
	Reached []string
	// Reasons holds, for every Trigger or Subscription of the target by
	// name, why it was or was not reached: the filter that decided.
	Reasons map[string]string
	// Destinations are the final destinations after forwards and replies,
	// sorted: a subscriber's URL, or KIND/NAMESPACE/NAME for a reference
	// the repository cannot resolve.
	Destinations []string
	// Unused names replies the case declares for something never reached.
	Unused []string
}

// pingTick is the tick whose event a case that starts at a PingSource
// sends; filters see its time.
var pingTick = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Evaluator routes events through one table with the runtime's matcher;
// matchers are compiled once per Broker and reused by every case.
type Evaluator struct {
	table    *routing.Table
	brokers  map[string]*routing.Broker // by "namespace/name" and by address
	channels map[string]*routing.Channel
	pings    map[string]*routing.PingSource
	sources  map[string]*routing.EventSource // by KIND/NAMESPACE/NAME
	matchers map[*routing.Broker]*router.Matcher
}

// NewEvaluator indexes table.
func NewEvaluator(table *routing.Table) *Evaluator {
	ev := &Evaluator{table: table, brokers: map[string]*routing.Broker{}, channels: map[string]*routing.Channel{},
		pings: map[string]*routing.PingSource{}, sources: map[string]*routing.EventSource{}, matchers: map[*routing.Broker]*router.Matcher{}}
	for i := range table.PingSources {
		ps := &table.PingSources[i]
		ev.pings[ps.Key()] = ps
	}
	for i := range table.Sources {
		es := &table.Sources[i]
		ev.sources[es.Key()] = es
	}
	for i := range table.Brokers {
		b := &table.Brokers[i]
		ev.brokers[b.Key()] = b
		if b.Address != "" {
			ev.brokers[b.Address] = b
		}
	}
	for i := range table.Channels {
		c := &table.Channels[i]
		ev.channels[c.Key()] = c
		if c.Address != "" {
			ev.channels[c.Address] = c
		}
	}
	return ev
}

// Has reports whether the table holds t.
func (ev *Evaluator) Has(t Target) bool {
	switch t.Kind {
	case "Channel":
		return ev.channels[t.key()] != nil
	case KindPingSource:
		return ev.pings[t.key()] != nil
	case "Broker":
		return ev.brokers[t.key()] != nil
	}
	return ev.sources[t.sourceKey()] != nil
}

// Targets lists what the table holds of kind, for messages: Brokers,
// Channels and PingSources as NAMESPACE/NAME, other sources as
// KIND/NAMESPACE/NAME, those of every kind.
func (ev *Evaluator) Targets(kind string) []string {
	var out []string
	switch kind {
	case KindPingSource:
		for _, ps := range ev.table.PingSources {
			out = append(out, ps.Key())
		}
	case "Channel":
		for _, c := range ev.table.Channels {
			out = append(out, c.Key())
		}
	case "Broker":
		for _, b := range ev.table.Brokers {
			out = append(out, b.Key())
		}
	default:
		for _, ps := range ev.table.PingSources {
			out = append(out, KindPingSource+"/"+ps.Key())
		}
		for i := range ev.table.Sources {
			out = append(out, ev.table.Sources[i].Key())
		}
	}
	return out
}

func (ev *Evaluator) matcher(b *routing.Broker) (*router.Matcher, error) {
	if m, ok := ev.matchers[b]; ok {
		return m, nil
	}
	m, err := router.Compile(b.Triggers)
	if err != nil {
		return nil, fmt.Errorf("broker %s: %w", b.Key(), err)
	}
	ev.matchers[b] = m
	return m, nil
}

// Evaluate sends c's event to its target. The target must be in the table
// (see Has).
func (ev *Evaluator) Evaluate(c *Case) (*Outcome, error) {
	tr := &trace{ev: ev, c: c, destinations: map[string]bool{}, used: map[string]bool{}}
	out := &Outcome{Reasons: map[string]string{}}
	key := c.Target.key()
	kind, e := c.Target.Kind, c.Event
	var err error
	if c.Target.IsSource() {
		// The source's event, sent into its sink: a Broker or Channel of
		// the table (a Sequence's or Parallel's is its first Channel), or
		// a final destination.
		var sink routing.Destination
		if kind == KindPingSource {
			ps := ev.pings[key]
			if e, err = ping.NewEvent(ps, pingTick); err != nil {
				return nil, err
			}
			sink = ps.Sink
		} else {
			es := ev.sources[c.Target.sourceKey()]
			if e, err = withOverrides(c.Event, es.Extensions); err != nil {
				return nil, fmt.Errorf("%s: ceOverrides: %w", c.Target, err)
			}
			sink = es.Sink
		}
		switch {
		case ev.brokers[sink.URI] != nil && sink.Ref == nil:
			kind, key = "Broker", ev.brokers[sink.URI].Key()
		case ev.channels[sink.URI] != nil && sink.Ref == nil:
			kind, key = "Channel", ev.channels[sink.URI].Key()
		default:
			tr.destinations[DestinationName(sink)] = true
			kind = ""
		}
	}
	switch kind {
	case "":
	case "Channel":
		ch := ev.channels[key]
		for _, s := range ch.Subscriptions {
			out.Reached = append(out.Reached, s.Name)
			out.Reasons[s.Name] = "a Channel delivers every event to each of its Subscriptions"
		}
		err = tr.channel(ch, e, 0)
	default:
		b := ev.brokers[key]
		var m *router.Matcher
		if m, err = ev.matcher(b); err != nil {
			return nil, err
		}
		for _, v := range m.Explain(e) {
			t := &b.Triggers[v.Index]
			verdict := "not matched: "
			if v.Matched {
				out.Reached = append(out.Reached, t.Name)
				verdict = "matched: "
			}
			out.Reasons[t.Name] = verdict + v.Reason
		}
		err = tr.broker(b, e, 0)
	}
	if err != nil {
		return nil, err
	}
	slices.Sort(out.Reached)
	for d := range tr.destinations {
		out.Destinations = append(out.Destinations, d)
	}
	slices.Sort(out.Destinations)
	for name := range c.Replies {
		if !tr.used[name] {
			out.Unused = append(out.Unused, name)
		}
	}
	slices.Sort(out.Unused)
	return out, nil
}

// withOverrides is e as a source with these ceOverrides sends it:
// Knative's adapters set every extension on each event, replacing a value
// the event had.
func withOverrides(e *event.Event, extensions map[string]string) (*event.Event, error) {
	out := e.Clone()
	for _, name := range slices.Sorted(maps.Keys(extensions)) {
		if err := out.Context.SetExtension(name, extensions[name]); err != nil {
			return nil, fmt.Errorf("extension %s: %w", name, err)
		}
	}
	return &out, nil
}

// trace follows one case's event and the replies it causes.
type trace struct {
	ev           *Evaluator
	c            *Case
	destinations map[string]bool
	used         map[string]bool
}

func (tr *trace) hop(hops int, via string) error {
	if hops >= MaxHops {
		return fmt.Errorf("the event is still travelling after %d hops, at %s: the forwards and replies loop", MaxHops, via)
	}
	return nil
}

func (tr *trace) broker(b *routing.Broker, e *event.Event, hops int) error {
	if err := tr.hop(hops, "broker "+b.Key()); err != nil {
		return err
	}
	m, err := tr.ev.matcher(b)
	if err != nil {
		return err
	}
	for _, i := range m.Match(e, nil) {
		t := &b.Triggers[i]
		forwarded, err := tr.deliver(t.Subscriber, e, hops)
		if err != nil {
			return err
		}
		if forwarded {
			continue
		}
		// A Trigger's subscriber answers to its Broker, which routes the
		// reply as a new event.
		if reply, name := tr.reply(t.Namespace, t.Name); reply != nil {
			tr.used[name] = true
			if err := tr.broker(b, reply, hops+1); err != nil {
				return err
			}
		}
	}
	return nil
}

func (tr *trace) channel(ch *routing.Channel, e *event.Event, hops int) error {
	if err := tr.hop(hops, "channel "+ch.Key()); err != nil {
		return err
	}
	for i := range ch.Subscriptions {
		s := &ch.Subscriptions[i]
		if s.Subscriber == nil {
			// With no subscriber, the event itself goes to the reply.
			if s.Reply != nil {
				if _, err := tr.deliver(*s.Reply, e, hops); err != nil {
					return err
				}
			}
			continue
		}
		forwarded, err := tr.deliver(*s.Subscriber, e, hops)
		if err != nil {
			return err
		}
		if forwarded {
			continue
		}
		if reply, name := tr.reply(s.Namespace, s.Name); reply != nil {
			tr.used[name] = true
			if s.Reply != nil {
				if _, err := tr.deliver(*s.Reply, reply, hops+1); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// deliver sends e to d: on to a Broker or Channel of the table (a
// forward), or to a final destination.
func (tr *trace) deliver(d routing.Destination, e *event.Event, hops int) (forwarded bool, err error) {
	if d.Ref == nil {
		if b := tr.ev.brokers[d.URI]; b != nil {
			return true, tr.broker(b, e, hops+1)
		}
		if ch := tr.ev.channels[d.URI]; ch != nil {
			return true, tr.channel(ch, e, hops+1)
		}
	}
	tr.destinations[DestinationName(d)] = true
	return false, nil
}

// reply is the reply the case declares for a Trigger or Subscription, by
// NAMESPACE/NAME or by name alone.
func (tr *trace) reply(namespace, name string) (*event.Event, string) {
	if e, ok := tr.c.Replies[namespace+"/"+name]; ok {
		return e, namespace + "/" + name
	}
	if e, ok := tr.c.Replies[name]; ok {
		return e, name
	}
	return nil, ""
}

// DestinationName is how a destination is written in a test file.
func DestinationName(d routing.Destination) string {
	if d.Ref == nil {
		return d.URI
	}
	ref := d.Ref.Kind + "/" + d.Ref.Namespace + "/" + d.Ref.Name
	if d.URI != "" {
		ref += " " + d.URI
	}
	return ref
}

// Differences compares an outcome with what c expects, as lines such as
// "expected [a, b], got [a]"; none when the case passes.
func Differences(c *Case, o *Outcome) []string {
	var out []string
	if !slices.Equal(c.Expect, o.Reached) {
		out = append(out, fmt.Sprintf("expected %s, got %s", List(c.Expect), List(o.Reached)))
	}
	if c.HasDestinations && !slices.Equal(c.Destinations, o.Destinations) {
		out = append(out, fmt.Sprintf("expected destinations %s, got %s", List(c.Destinations), List(o.Destinations)))
	}
	for _, name := range o.Unused {
		out = append(out, fmt.Sprintf("a reply is declared for %s, which the event never reaches", name))
	}
	return out
}

// Explanations say, for each name where expected and got differ, why it
// was or was not reached.
func Explanations(c *Case, o *Outcome) []string {
	var out []string
	for _, name := range symmetricDifference(c.Expect, o.Reached) {
		reason, ok := o.Reasons[name]
		if !ok {
			kind := "Trigger"
			if c.Target.Kind == "Channel" {
				kind = "Subscription"
			}
			reason = fmt.Sprintf("%s has no %s of that name", c.Target, kind)
		}
		out = append(out, name+": "+reason)
	}
	return out
}

func symmetricDifference(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	for _, x := range b {
		if !slices.Contains(a, x) {
			out = append(out, x)
		}
	}
	slices.Sort(out)
	return out
}

// List formats names as [a, b], or none.
func List(names []string) string {
	if len(names) == 0 {
		return None
	}
	return "[" + strings.Join(names, ", ") + "]"
}
