package routing

import (
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"time"
)

// Validate checks the invariants the runtime relies on. The compiler only
// produces valid tables; this guards against hand-edited or corrupted ones.
func (t *Table) Validate() error {
	var errs []error
	paths := map[string]string{}
	claim := func(path, owner string) {
		if prev, ok := paths[path]; ok {
			errs = append(errs, fmt.Errorf("%s: path %q is already served by %s", owner, path, prev))
			return
		}
		paths[path] = owner
	}
	for i := range t.Brokers {
		b := &t.Brokers[i]
		where := "broker " + b.Key()
		errs = append(errs, b.Source.validate(where))
		claim(b.Path, where)
		errs = append(errs, b.Delivery.validate(where+": delivery"))
		for j := range b.Triggers {
			tr := &b.Triggers[j]
			tw := "trigger " + tr.Key()
			errs = append(errs, tr.Source.validate(tw))
			errs = append(errs, tr.Subscriber.validate(tw+": subscriber"))
			errs = append(errs, tr.Delivery.validate(tw+": delivery"))
			for k := range tr.Filters {
				errs = append(errs, tr.Filters[k].validate(fmt.Sprintf("%s: filters[%d]", tw, k)))
			}
		}
	}
	for i := range t.Channels {
		c := &t.Channels[i]
		where := "channel " + c.Key()
		errs = append(errs, c.Source.validate(where))
		claim(c.Path, where)
		errs = append(errs, c.Delivery.validate(where+": delivery"))
		for j := range c.Subscriptions {
			s := &c.Subscriptions[j]
			sw := "subscription " + s.Key()
			errs = append(errs, s.Source.validate(sw))
			if s.Subscriber == nil && s.Reply == nil {
				errs = append(errs, fmt.Errorf("%s: needs a subscriber or a reply", sw))
			}
			if s.Subscriber != nil {
				errs = append(errs, s.Subscriber.validate(sw+": subscriber"))
			}
			if s.Reply != nil {
				errs = append(errs, s.Reply.validate(sw+": reply"))
			}
			errs = append(errs, s.Delivery.validate(sw+": delivery"))
		}
	}
	seen := map[string]bool{}
	for i := range t.PingSources {
		ps := &t.PingSources[i]
		where := "pingsource " + ps.Key()
		errs = append(errs, ps.Source.validate(where))
		if seen[ps.Key()] {
			errs = append(errs, fmt.Errorf("%s: appears twice", where))
		}
		seen[ps.Key()] = true
		if ps.Schedule == "" {
			errs = append(errs, fmt.Errorf("%s: schedule is required", where))
		}
		if ps.Data != "" && ps.DataBase64 != "" {
			errs = append(errs, fmt.Errorf("%s: data and dataBase64 are both set", where))
		}
		if ps.DataBase64 != "" {
			if _, err := base64.StdEncoding.DecodeString(ps.DataBase64); err != nil {
				errs = append(errs, fmt.Errorf("%s: dataBase64: %w", where, err))
			}
		}
		errs = append(errs, ps.Sink.validate(where+": sink"))
		// A part of a split table may hold a PingSource without its sink;
		// the merged table is checked whole.
		if ps.SinkPath != "" && t.Shard == nil {
			if _, ok := paths[ps.SinkPath]; !ok {
				errs = append(errs, fmt.Errorf("%s: sinkPath %q is no Broker or Channel of the table", where, ps.SinkPath))
			}
		}
	}
	seen = map[string]bool{}
	for i := range t.Sources {
		es := &t.Sources[i]
		where := "source " + es.Key()
		errs = append(errs, es.Source.validate(where))
		if es.APIVersion == "" || es.Kind == "" {
			errs = append(errs, fmt.Errorf("%s: apiVersion and kind are required", where))
		}
		if seen[es.Key()] {
			errs = append(errs, fmt.Errorf("%s: appears twice", where))
		}
		seen[es.Key()] = true
		errs = append(errs, es.Sink.validate(where+": sink"))
		if es.SinkPath != "" && t.Shard == nil {
			if _, ok := paths[es.SinkPath]; !ok {
				errs = append(errs, fmt.Errorf("%s: sinkPath %q is no Broker or Channel of the table", where, es.SinkPath))
			}
		}
	}
	for i := range t.Sequences {
		sq := &t.Sequences[i]
		where := "sequence " + sq.Key()
		errs = append(errs, sq.Source.validate(where))
		if len(sq.Channels) == 0 || len(sq.Channels) != len(sq.Subscriptions) {
			errs = append(errs, fmt.Errorf("%s: needs one channel and one subscription per step, and at least one step", where))
		}
	}
	for i := range t.Parallels {
		p := &t.Parallels[i]
		where := "parallel " + p.Key()
		errs = append(errs, p.Source.validate(where))
		if p.Channel == "" || len(p.Branches) == 0 {
			errs = append(errs, fmt.Errorf("%s: needs its channel and at least one branch", where))
		}
		for j, b := range p.Branches {
			if b.Channel == "" || b.FilterSubscription == "" || b.Subscription == "" {
				errs = append(errs, fmt.Errorf("%s: branches[%d]: needs its channel, filter subscription and subscription", where, j))
			}
		}
	}
	return errors.Join(errs...)
}

func (o Source) validate(where string) error {
	if o.Namespace == "" || o.Name == "" {
		return fmt.Errorf("%s: namespace and name are required", where)
	}
	return nil
}

func (d *Destination) validate(where string) error {
	if d.Ref != nil {
		if d.Ref.Kind == "" || d.Ref.Name == "" || d.Ref.APIVersion == "" || d.Ref.Namespace == "" {
			return fmt.Errorf("%s: ref needs apiVersion, kind, namespace and name", where)
		}
		if d.URI != "" {
			if _, err := url.Parse(d.URI); err != nil {
				return fmt.Errorf("%s: %w", where, err)
			}
		}
		return nil
	}
	u, err := url.Parse(d.URI)
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	if !u.IsAbs() || u.Host == "" {
		return fmt.Errorf("%s: uri %q must be absolute", where, d.URI)
	}
	return nil
}

func (d *Delivery) validate(where string) error {
	if d == nil {
		return nil
	}
	var errs []error
	if d.Retry < 0 {
		errs = append(errs, fmt.Errorf("%s: retry must not be negative", where))
	}
	switch d.BackoffPolicy {
	case "", BackoffLinear, BackoffExponential:
	default:
		errs = append(errs, fmt.Errorf("%s: unknown backoffPolicy %q", where, d.BackoffPolicy))
	}
	switch d.Format {
	case "", FormatBinary, FormatJSON:
	default:
		errs = append(errs, fmt.Errorf("%s: unknown format %q", where, d.Format))
	}
	for name, v := range map[string]Duration{"backoffDelay": d.BackoffDelay, "timeout": d.Timeout, "retryAfterMax": d.RetryAfterMax} {
		if time.Duration(v) < 0 {
			errs = append(errs, fmt.Errorf("%s: %s must not be negative", where, name))
		}
	}
	if d.DeadLetterSink != nil {
		errs = append(errs, d.DeadLetterSink.validate(where+": deadLetterSink"))
	}
	return errors.Join(errs...)
}

func (f *Filter) validate(where string) error {
	n := 0
	for _, set := range []bool{f.Exact != nil, f.Prefix != nil, f.Suffix != nil, f.All != nil, f.Any != nil, f.Not != nil, f.CESQL != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return fmt.Errorf("%s: exactly one dialect must be set, found %d", where, n)
	}
	// An empty dialect would not survive encoding (empty values are
	// omitted), and the compiler never writes one.
	for name, empty := range map[string]bool{
		"exact": f.Exact != nil && len(f.Exact) == 0, "prefix": f.Prefix != nil && len(f.Prefix) == 0,
		"suffix": f.Suffix != nil && len(f.Suffix) == 0, "all": f.All != nil && len(f.All) == 0,
		"any": f.Any != nil && len(f.Any) == 0,
	} {
		if empty {
			return fmt.Errorf("%s.%s: must not be empty", where, name)
		}
	}
	var errs []error
	for i := range f.All {
		errs = append(errs, f.All[i].validate(fmt.Sprintf("%s.all[%d]", where, i)))
	}
	for i := range f.Any {
		errs = append(errs, f.Any[i].validate(fmt.Sprintf("%s.any[%d]", where, i)))
	}
	if f.Not != nil {
		errs = append(errs, f.Not.validate(where+".not"))
	}
	return errors.Join(errs...)
}

// Address paths. Brokers and Channels get distinct prefixes so that a Broker
// and a Channel of the same name in one namespace never collide.
func BrokerPath(namespace, name string) string  { return "/brokers/" + namespace + "/" + name }
func ChannelPath(namespace, name string) string { return "/channels/" + namespace + "/" + name }
