package resolve

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
)

// Resolver returns the URL a Destination delivers to. A Destination whose
// Ref is nil carries an absolute URI and resolves to it; one with a Ref
// resolves to the referent's address with URI, if set, resolved relative to
// it. An error means the destination cannot be used now; the runtime keeps
// the events bound for it until it can.
type Resolver interface {
	Resolve(ctx context.Context, d routing.Destination) (*url.URL, error)
}

// ErrNotAddressable is wrapped by errors about Refs whose referent does not
// exist or has no address.
var ErrNotAddressable = errors.New("not addressable")

// Destination fields, as in Site.Field.
const (
	FieldSubscriber     = "subscriber"
	FieldReply          = "reply"
	FieldDeadLetterSink = "deadLetterSink"
	FieldSink           = "sink"
)

// Site names one Destination field of one object of the table.
type Site struct {
	// Kind is one of knative.KindBroker, KindTrigger, KindChannel,
	// KindSubscription and KindPingSource.
	Kind      string
	Namespace string
	Name      string
	Field     string
}

// Result is the outcome of resolving one Destination: URL on success, Err
// otherwise.
type Result struct {
	URL string
	Err error
}

// Results holds the outcome for every Destination of a table. A Site that
// is absent has no Destination (no dead-letter sink, no reply).
type Results map[Site]Result

// Lookup returns the result for a field of an object.
func (r Results) Lookup(kind string, o routing.Source, field string) (Result, bool) {
	res, ok := r[Site{Kind: kind, Namespace: o.Namespace, Name: o.Name, Field: field}]
	return res, ok
}

// All resolves every Destination of t: the dead-letter sinks of Brokers and
// Channels, the subscriber and effective dead-letter sink of each Trigger,
// the subscriber, reply and effective dead-letter sink of each
// Subscription, and the sink of each PingSource.
func All(ctx context.Context, t *routing.Table, r Resolver) Results {
	out := Results{}
	add := func(kind string, o routing.Source, field string, d *routing.Destination) {
		if d == nil {
			return
		}
		var res Result
		u, err := r.Resolve(ctx, *d)
		if err != nil {
			res.Err = err
		} else {
			res.URL = u.String()
		}
		out[Site{Kind: kind, Namespace: o.Namespace, Name: o.Name, Field: field}] = res
	}
	for i := range t.Brokers {
		b := &t.Brokers[i]
		add(knative.KindBroker, b.Source, FieldDeadLetterSink, deadLetterSink(b.Delivery))
		for j := range b.Triggers {
			tr := &b.Triggers[j]
			add(knative.KindTrigger, tr.Source, FieldSubscriber, &tr.Subscriber)
			add(knative.KindTrigger, tr.Source, FieldDeadLetterSink, deadLetterSink(tr.Delivery))
		}
	}
	for i := range t.Channels {
		c := &t.Channels[i]
		add(knative.KindChannel, c.Source, FieldDeadLetterSink, deadLetterSink(c.Delivery))
		for j := range c.Subscriptions {
			s := &c.Subscriptions[j]
			add(knative.KindSubscription, s.Source, FieldSubscriber, s.Subscriber)
			add(knative.KindSubscription, s.Source, FieldReply, s.Reply)
			add(knative.KindSubscription, s.Source, FieldDeadLetterSink, deadLetterSink(s.Delivery))
		}
	}
	for i := range t.PingSources {
		ps := &t.PingSources[i]
		add(knative.KindPingSource, ps.Source, FieldSink, &ps.Sink)
	}
	return out
}

func deadLetterSink(d *routing.Delivery) *routing.Destination {
	if d == nil {
		return nil
	}
	return d.DeadLetterSink
}

// Local resolves the Destinations of a table served by one local listener:
// Refs to the table's own Brokers and Channels to the listener's URL plus
// their path, and absolute URIs as they are, except those on the host of a
// Broker's or Channel's cluster address (its Address in the table, which is
// where the compiler resolves a ref to an object of the repository): one
// listener serves them all, so their path is kept and their scheme and host
// become the listener's. It knows no other referent.
type Local struct {
	base  *url.URL
	paths map[refKey]string
	// served holds the scheme://host of every cluster address of the table.
	served map[string]bool
}

type refKey struct {
	group, kind, namespace, name string
}

// NewLocal returns a Local for t served at baseURL ("http://127.0.0.1:8080").
func NewLocal(t *routing.Table, baseURL string) (*Local, error) {
	base, err := url.Parse(baseURL)
	if err != nil {
		return nil, fmt.Errorf("local resolver: base URL: %w", err)
	}
	if !base.IsAbs() || base.Host == "" {
		return nil, fmt.Errorf("local resolver: base URL %q must be absolute", baseURL)
	}
	l := &Local{base: base, paths: map[refKey]string{}, served: map[string]bool{}}
	for _, b := range t.Brokers {
		l.paths[refKey{knative.GroupEventing, knative.KindBroker, b.Namespace, b.Name}] = b.Path
		l.serve(b.Address)
	}
	for _, c := range t.Channels {
		l.paths[refKey{knative.GroupMessaging, knative.KindChannel, c.Namespace, c.Name}] = c.Path
		l.serve(c.Address)
	}
	return l, nil
}

func (l *Local) serve(address string) {
	if u, err := url.Parse(address); err == nil && u.IsAbs() && u.Host != "" {
		l.served[origin(u)] = true
	}
}

func origin(u *url.URL) string { return strings.ToLower(u.Scheme + "://" + u.Host) }

// Resolve implements Resolver.
func (l *Local) Resolve(_ context.Context, d routing.Destination) (*url.URL, error) {
	if d.Ref == nil {
		u, err := url.Parse(d.URI)
		if err != nil {
			return nil, fmt.Errorf("uri %q: %w", d.URI, err)
		}
		if !u.IsAbs() || u.Host == "" {
			return nil, fmt.Errorf("uri %q is not absolute and has no ref to resolve it against", d.URI)
		}
		if l.served[origin(u)] {
			local := l.base.JoinPath(u.Path)
			local.RawQuery = u.RawQuery
			return local, nil
		}
		return u, nil
	}
	ref := d.Ref
	group, _, _ := strings.Cut(ref.APIVersion, "/")
	path, ok := l.paths[refKey{group, ref.Kind, ref.Namespace, ref.Name}]
	if !ok {
		return nil, fmt.Errorf("%s %s/%s (%s): %w: a local runtime only resolves references to the Brokers and Channels of its routing table",
			ref.Kind, ref.Namespace, ref.Name, ref.APIVersion, ErrNotAddressable)
	}
	return Relative(l.base.JoinPath(path), d.URI)
}

// Relative resolves uri against the address of a Ref, as a Destination with
// both ref and uri asks: "/path" replaces the address's path, "path" is
// resolved like a relative link, and an absolute uri wins.
func Relative(address *url.URL, uri string) (*url.URL, error) {
	if uri == "" {
		return address, nil
	}
	ref, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("uri %q: %w", uri, err)
	}
	return address.ResolveReference(ref), nil
}
