package routing

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// APIVersion and Kind identify the encoded table. A runtime refuses a table
// whose apiVersion it does not know, so an old runtime never half-reads a new
// compiler's output.
const (
	Group      = "routing.knc.dev"
	APIVersion = Group + "/v1alpha1"
	Kind       = "RoutingTable"
)

// Table is everything the runtime needs to serve events: the ingress points and
// what each one fans out to. Slices are kept sorted by (namespace, name) by
// the compiler so that the encoding is deterministic.
type Table struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Shard, when set, says that this is one part of a table split across
	// several files (see Split and Merge).
	Shard    *Shard    `json:"shard,omitempty"`
	Brokers  []Broker  `json:"brokers,omitempty"`
	Channels []Channel `json:"channels,omitempty"`
	// PingSources are the PingSources the runtime fires.
	PingSources []PingSource `json:"pingSources,omitempty"`
	// Sources are the event sources of every other kind (ApiServerSource,
	// ContainerSource, SinkBinding, the sources of other projects), which
	// the runtime does not run: the table names where their events enter,
	// so that the runtime's page draws them and knc test starts at them.
	Sources []EventSource `json:"sources,omitempty"`
	// Sequences and Parallels route nothing of their own: the compiler
	// made Channels and Subscriptions of them, listed above. They name
	// those, so that the runtime reports a flow's status from its parts'.
	Sequences []Sequence `json:"sequences,omitempty"`
	Parallels []Parallel `json:"parallels,omitempty"`
}

// Sequence names the Channels and Subscriptions a Sequence was compiled
// into, all in its namespace, one of each per step in order. The first
// Channel is the Sequence's address.
type Sequence struct {
	Source        `json:",inline"`
	Channels      []string `json:"channels"`
	Subscriptions []string `json:"subscriptions"`
}

// Parallel names the Channels and Subscriptions a Parallel was compiled
// into, all in its namespace: its ingress Channel, which is its address,
// and per branch a Channel and two Subscriptions.
type Parallel struct {
	Source   `json:",inline"`
	Channel  string   `json:"channel"`
	Branches []Branch `json:"branches"`
}

// Branch is one branch of a Parallel: FilterSubscription reads the
// Parallel's Channel and feeds Channel (through the filter, when the
// branch has one); Subscription reads Channel and feeds the subscriber.
type Branch struct {
	Channel            string `json:"channel"`
	FilterSubscription string `json:"filterSubscription"`
	Subscription       string `json:"subscription"`
}

// Source identifies the Knative object an entry was compiled from.
type Source struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Generation is the metadata.generation the entry was compiled for; 0 when
	// the source manifest did not say (every local object is then generation 1).
	Generation int64 `json:"generation,omitempty"`
	// SpecHash is the hash of the normalised spec, written into the
	// knc.dev/spec-hash annotation, so a live object can be compared with it.
	SpecHash string `json:"specHash,omitempty"`
}

// Key returns "namespace/name".
func (o Source) Key() string { return o.Namespace + "/" + o.Name }

// Broker is an ingress point whose events are evaluated against each Trigger.
type Broker struct {
	Source `json:",inline"`
	// Path is where the runtime's listener serves this Broker,
	// /brokers/NAMESPACE/NAME. Brokers and Channels have separate prefixes
	// because the two kinds may share a name in one namespace.
	Path string `json:"path"`
	// Address is status.address.url as the compiled cluster serves it. A local
	// runtime reports its own listener plus Path instead.
	Address  string    `json:"address,omitempty"`
	Delivery *Delivery `json:"delivery,omitempty"`
	Triggers []Trigger `json:"triggers,omitempty"`
}

// Trigger delivers the events of its Broker that pass its filter.
type Trigger struct {
	Source `json:",inline"`
	// Attributes is spec.filter.attributes: every key must be present, and a
	// non-empty value must be equal. Ignored when Filters is set.
	Attributes map[string]string `json:"attributes,omitempty"`
	// Filters is spec.filters; all of them must pass.
	Filters    []Filter    `json:"filters,omitempty"`
	Subscriber Destination `json:"subscriber"`
	// Delivery is the effective delivery: the Trigger's own when it sets any
	// field, otherwise its Broker's.
	Delivery *Delivery `json:"delivery,omitempty"`
	// KeepDeadLettered asks for a copy of each delivery the dead-letter sink
	// accepted to be kept as a kept letter: the knc.dev/keep-dead-lettered
	// annotation of the Trigger when it has one, otherwise its Broker's.
	KeepDeadLettered bool `json:"keepDeadLettered,omitempty"`
}

// Channel is an ingress point whose events go to every Subscription.
type Channel struct {
	Source `json:",inline"`
	// Path is /channels/NAMESPACE/NAME.
	Path          string         `json:"path"`
	Address       string         `json:"address,omitempty"`
	Delivery      *Delivery      `json:"delivery,omitempty"`
	Subscriptions []Subscription `json:"subscriptions,omitempty"`
}

// Subscription delivers every event of its Channel to its subscriber, and the
// subscriber's reply to Reply.
type Subscription struct {
	Source     `json:",inline"`
	Subscriber *Destination `json:"subscriber,omitempty"`
	Reply      *Destination `json:"reply,omitempty"`
	// Delivery is the effective delivery: the Subscription's own when it sets
	// any field, otherwise its Channel's.
	Delivery *Delivery `json:"delivery,omitempty"`
	// KeepDeadLettered is Trigger.KeepDeadLettered, from the Subscription's
	// annotation or else its Channel's.
	KeepDeadLettered bool `json:"keepDeadLettered,omitempty"`
}

// PingSource sends an event to its sink on a cron schedule, as Knative's
// mt-ping adapter does.
type PingSource struct {
	Source `json:",inline"`
	// Schedule is spec.schedule, defaulted: five cron fields, an optional
	// leading seconds field, or a descriptor such as @hourly.
	Schedule string `json:"schedule"`
	// Timezone is spec.timezone, an IANA time zone; empty is UTC.
	Timezone    string `json:"timezone,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	// Data is spec.data, sent as it is; DataBase64 is spec.dataBase64,
	// sent decoded. At most one is set.
	Data       string `json:"data,omitempty"`
	DataBase64 string `json:"dataBase64,omitempty"`
	// Extensions are spec.ceOverrides.extensions, set on every event.
	Extensions map[string]string `json:"extensions,omitempty"`
	// Sink is spec.sink. When it is a Broker or Channel of this table, its
	// uri is that entry's address and SinkPath its path: the runtime then
	// stores each event in that entry's ingress stream, and the Broker's
	// Triggers (the Channel's Subscriptions) deliver it with their
	// delivery options.
	Sink     Destination `json:"sink"`
	SinkPath string      `json:"sinkPath,omitempty"`
}

// EventSource is an event source that the runtime does not run: another
// program (Knative's adapter, a container, a SinkBinding's subject) makes
// its events and sends them to its sink with its extensions.
type EventSource struct {
	Source `json:",inline"`
	// APIVersion and Kind are the object's, such as sources.knative.dev/v1
	// ApiServerSource: any kind with the sources' duck type.
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	// Extensions are spec.ceOverrides.extensions, which Knative's adapters
	// set on every event they send.
	Extensions map[string]string `json:"extensions,omitempty"`
	// Sink and SinkPath are PingSource's: spec.sink resolved, and the path
	// of the Broker or Channel of this table it names.
	Sink     Destination `json:"sink"`
	SinkPath string      `json:"sinkPath,omitempty"`
}

// Key returns "KIND/namespace/name": sources of two kinds may share a
// name.
func (s *EventSource) Key() string { return s.Kind + "/" + s.Source.Key() }

// ShownIn is the namespace whose runtime's table carries s: that of the
// Broker or Channel its SinkPath names, whose page draws the events
// entering, or else s's own.
func (s *EventSource) ShownIn() string { return sinkNamespace(s.SinkPath, s.Namespace) }

// ForNamespace returns the part of t that the runtime of namespace ns
// serves: its Brokers, Channels, Sequences and Parallels, the
// PingSources it fires (FiredIn) and the other sources feeding it
// (ShownIn). knc build writes one such table per namespace.
func (t *Table) ForNamespace(ns string) *Table {
	return &Table{
		APIVersion:  t.APIVersion,
		Kind:        t.Kind,
		Brokers:     keep(t.Brokers, func(b *Broker) bool { return b.Namespace == ns }),
		Channels:    keep(t.Channels, func(c *Channel) bool { return c.Namespace == ns }),
		PingSources: keep(t.PingSources, func(p *PingSource) bool { return p.FiredIn() == ns }),
		Sources:     keep(t.Sources, func(s *EventSource) bool { return s.ShownIn() == ns }),
		Sequences:   keep(t.Sequences, func(s *Sequence) bool { return s.Namespace == ns }),
		Parallels:   keep(t.Parallels, func(p *Parallel) bool { return p.Namespace == ns }),
	}
}

// keep returns the elements of all that in holds for, in order; nil when
// none, so that an empty list is left out of the table's JSON.
func keep[T any](all []T, in func(*T) bool) []T {
	var out []T
	for i := range all {
		if in(&all[i]) {
			out = append(out, all[i])
		}
	}
	return out
}

// FiredIn is the namespace whose runtime fires p: that of the Broker or
// Channel its SinkPath names, whose ingress stream the events go to, or
// else p's own.
func (p *PingSource) FiredIn() string { return sinkNamespace(p.SinkPath, p.Namespace) }

// sinkNamespace is the namespace of the Broker or Channel a sinkPath
// names, or own when it names none.
func sinkNamespace(sinkPath, own string) string {
	for _, prefix := range []string{"/brokers/", "/channels/"} {
		if rest, ok := strings.CutPrefix(sinkPath, prefix); ok {
			if ns, _, ok := strings.Cut(rest, "/"); ok && ns != "" {
				return ns
			}
		}
	}
	return own
}

// Filter is one entry of spec.filters; exactly one field is set.
type Filter struct {
	Exact  map[string]string `json:"exact,omitempty"`
	Prefix map[string]string `json:"prefix,omitempty"`
	Suffix map[string]string `json:"suffix,omitempty"`
	All    []Filter          `json:"all,omitempty"`
	Any    []Filter          `json:"any,omitempty"`
	Not    *Filter           `json:"not,omitempty"`
	CESQL  string            `json:"cesql,omitempty"`
}

// Destination is a resolved or still-to-be-resolved address.
//
// When Ref is nil, URI is absolute and final. When Ref is set, the compiler
// could not resolve it from the repository: the runtime reads the referent's
// status.address.url (the Addressable duck type) and, if URI is set, resolves
// URI relative to it.
type Destination struct {
	URI string `json:"uri,omitempty"`
	Ref *Ref   `json:"ref,omitempty"`
}

// Ref is a duck-typed reference to an Addressable.
type Ref struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Namespace  string `json:"namespace"`
	Name       string `json:"name"`
}

// Delivery holds the options of eventing.knative.dev DeliverySpec, with
// durations already parsed from ISO-8601.
type Delivery struct {
	// Retry is the number of attempts after the first.
	Retry int32 `json:"retry,omitempty"`
	// BackoffPolicy is "linear" (every retry waits BackoffDelay) or
	// "exponential" (retry n waits BackoffDelay × 2^(n−1)).
	BackoffPolicy  string       `json:"backoffPolicy,omitempty"`
	BackoffDelay   Duration     `json:"backoffDelay,omitempty"`
	Timeout        Duration     `json:"timeout,omitempty"`
	RetryAfterMax  Duration     `json:"retryAfterMax,omitempty"`
	DeadLetterSink *Destination `json:"deadLetterSink,omitempty"`
	// Format is "binary" (the default) or "json" (structured mode).
	Format string `json:"format,omitempty"`
}

// Backoff policies and delivery formats.
const (
	BackoffLinear      = "linear"
	BackoffExponential = "exponential"
	FormatBinary       = "binary"
	FormatJSON         = "json"
)

// Duration encodes as a Go duration string ("200ms"), which needs no ISO-8601
// parser in the runtime and reads well in a ConfigMap.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string such as \"200ms\": %w", err)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration %q: %w", s, err)
	}
	*d = Duration(v)
	return nil
}

// Encode returns the canonical JSON encoding of t: indented, with a trailing
// newline, so that identical tables are identical bytes.
func Encode(t *Table) ([]byte, error) {
	c := *t
	c.APIVersion, c.Kind = APIVersion, Kind
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(&c); err != nil {
		return nil, fmt.Errorf("encoding routing table: %w", err)
	}
	return buf.Bytes(), nil
}

// Decode parses and checks an encoded table. Unknown fields are errors: a
// field this runtime does not know would otherwise be silently ignored.
func Decode(b []byte) (*Table, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var t Table
	if err := dec.Decode(&t); err != nil {
		return nil, fmt.Errorf("decoding routing table: %w", err)
	}
	// A second document, or a torn write followed by another, is not a
	// table either.
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decoding routing table: unexpected data after the table")
	}
	if t.APIVersion != APIVersion || t.Kind != Kind {
		return nil, fmt.Errorf("decoding routing table: got apiVersion %q kind %q, want %s %s", t.APIVersion, t.Kind, APIVersion, Kind)
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("decoding routing table: %w", err)
	}
	return &t, nil
}
