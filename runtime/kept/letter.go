package kept

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/runtime/cehttp"
)

// Why a delivery was kept, the reason label of knc_deliveries_kept_total.
const (
	// ReasonNoDeadLetterSink: retries exhausted, or a non-retryable answer,
	// and no dead-letter sink.
	ReasonNoDeadLetterSink = "no-dead-letter-sink"
	// ReasonDeadLetterFailed: the dead-letter sink refused it too, after
	// its retries.
	ReasonDeadLetterFailed = "dead-letter-failed"
	// ReasonDeadLettered: the dead-letter sink accepted it, and its Trigger
	// or Subscription asks for a copy (knc.dev/keep-dead-lettered: "true").
	// The delivery's outcome is dead-lettered; the letter is a copy.
	ReasonDeadLettered = "dead-lettered"
	// ReasonUnrouted: its Trigger or Subscription was deleted by a reload
	// while the delivery was pending.
	ReasonUnrouted = "unrouted"
	// ReasonTTL: a reply of the Trigger's subscriber that would have
	// exceeded its TTL (knativebrokerttl), which usually means a reply
	// loop. The delivery was delivered; the letter is its reply, and a
	// replay sends it to the Broker, with a fresh TTL only.
	ReasonTTL = "ttl"
)

// Reasons are every reason a letter is kept for, in the order knc dlq
// lists them in its help.
var Reasons = []string{ReasonNoDeadLetterSink, ReasonDeadLetterFailed, ReasonUnrouted, ReasonTTL, ReasonDeadLettered}

// Outcome reports whether a letter of reason is what became of its
// delivery, rather than something it left beside an outcome of its own:
// a copy of a dead-lettered delivery, or the reply of a delivered one.
func Outcome(reason string) bool {
	return reason != ReasonDeadLettered && reason != ReasonTTL
}

// Headers of a letter, beside the event's own (cehttp.ToNATS), its
// pass-through headers (cehttp.NATSPassThrough) and knc-accepted. Names
// are lower case: NATS headers are case sensitive. Each starts with
// HeaderPrefix, so that a replay can leave them all out.
const (
	HeaderPrefix      = "knc-kept-"
	HeaderReason      = "knc-kept-reason"
	HeaderSourceKind  = "knc-kept-source-kind" // broker or channel
	HeaderSource      = "knc-kept-source"      // namespace/name
	HeaderSourceID    = "knc-kept-source-id"   // the source's NATS ID, pipeline.Names.ID
	HeaderTargetKind  = "knc-kept-target-kind" // Trigger or Subscription
	HeaderTarget      = "knc-kept-target"      // name, in the source's namespace
	HeaderTargetToken = "knc-kept-target-token"
	HeaderDestination = "knc-kept-destination" // the URL that failed, redacted
	HeaderStatus      = "knc-kept-status"
	HeaderError       = "knc-kept-error" // redacted
	HeaderAttempts    = "knc-kept-attempts"
	HeaderKeptAt      = "knc-kept-at" // Unix nanoseconds
	// The values a dead-letter sink would have seen in the knativeerror*
	// extensions; the event itself is kept without them, so that a replay
	// sends it as its subscriber first got it.
	HeaderErrorDest = "knc-kept-knativeerrordest"
	HeaderErrorCode = "knc-kept-knativeerrorcode"
	HeaderErrorData = "knc-kept-knativeerrordata"
	// HeaderReplayOf marks a delivery a replay stored: the letter's ID.
	HeaderReplayOf = "knc-replay-of"
)

// headerAccepted is ingress.HeaderAccepted, which this package cannot
// import.
const headerAccepted = "knc-accepted"

// Names of the streams and subjects of letters: every name is made here.
const (
	// streamPrefix starts the name of each namespace's stream.
	streamPrefix = "knc_kept_"
	// subjectPrefix starts every subject of every stream of letters.
	subjectPrefix = "knc.kept."
	// AllSubjects matches the subjects of every stream of letters.
	AllSubjects = subjectPrefix + ">"
	// kinds of subjects within a namespace's stream.
	letterToken   = "letter"
	replayedToken = "replayed"
)

// StreamName is the stream of the letters of namespace (a DNS label).
func StreamName(namespace string) string { return streamPrefix + namespace }

// NamespaceOf returns the namespace whose letters the stream named name
// holds, and false for a stream of something else.
func NamespaceOf(stream string) (string, bool) {
	ns, ok := strings.CutPrefix(stream, streamPrefix)
	return ns, ok && ns != ""
}

// StreamSubjects are the subjects of the stream of namespace: letters,
// and marks of the letters replayed.
func StreamSubjects(namespace string) []string {
	base := subjectPrefix + namespace + "."
	return []string{base + letterToken + ".>", base + replayedToken + ".*"}
}

// Subject is where a letter of source sourceID's target with subject
// token target is stored.
func Subject(namespace, sourceID, target string) string {
	return subjectPrefix + namespace + "." + letterToken + "." + sourceID + "." + target
}

// ReplayedSubject marks the letter seq of namespace replayed.
func ReplayedSubject(namespace string, seq uint64) string {
	return subjectPrefix + namespace + "." + replayedToken + "." + strconv.FormatUint(seq, 10)
}

// ReplayedSeq reads the letter a mark's subject names.
func ReplayedSeq(subject string) (uint64, bool) {
	rest, ok := strings.CutPrefix(subject, subjectPrefix)
	if !ok {
		return 0, false
	}
	// NAMESPACE.replayed.SEQ; a namespace holds no dot.
	parts := strings.Split(rest, ".")
	if len(parts) != 3 || parts[1] != replayedToken {
		return 0, false
	}
	n, err := strconv.ParseUint(parts[2], 10, 64)
	return n, err == nil
}

// ID names a letter: its namespace and its sequence in the namespace's
// stream, "NAMESPACE/SEQ".
func ID(namespace string, seq uint64) string {
	return namespace + "/" + strconv.FormatUint(seq, 10)
}

// ParseID splits an ID.
func ParseID(id string) (namespace string, seq uint64, err error) {
	ns, s, ok := strings.Cut(id, "/")
	if ok {
		seq, err = strconv.ParseUint(s, 10, 64)
	}
	if !ok || err != nil || ns == "" || seq == 0 {
		return "", 0, fmt.Errorf("letter ID %q: want NAMESPACE/NUMBER, as knc dlq list prints it", id)
	}
	return ns, seq, nil
}

// Failure is why a delivery was kept.
type Failure struct {
	Reason string
	// Destination is the URL that failed, already redacted.
	Destination string
	Status      int
	// Error is the error of the last attempt, already redacted.
	Error    string
	Attempts int
	// ErrorDest, ErrorCode and ErrorData are the knativeerror* values.
	ErrorDest, ErrorCode, ErrorData string
}

// Destination is the Trigger or Subscription a letter was for.
type Destination struct {
	SourceKind  string // broker or channel
	Source      string // namespace/name
	SourceID    string
	TargetKind  string // Trigger or Subscription
	Target      string
	TargetToken string
}

// Stamp adds to m, a NATS message of the event (cehttp.ToNATS), what a
// letter says of its destination and failure.
func Stamp(m *nats.Msg, d Destination, f Failure, at time.Time) {
	if m.Header == nil {
		m.Header = nats.Header{}
	}
	set := func(k, v string) {
		if v != "" {
			m.Header[k] = []string{v}
		}
	}
	set(HeaderReason, f.Reason)
	set(HeaderSourceKind, d.SourceKind)
	set(HeaderSource, d.Source)
	set(HeaderSourceID, d.SourceID)
	set(HeaderTargetKind, d.TargetKind)
	set(HeaderTarget, d.Target)
	set(HeaderTargetToken, d.TargetToken)
	set(HeaderDestination, f.Destination)
	if f.Status != 0 {
		set(HeaderStatus, strconv.Itoa(f.Status))
	}
	set(HeaderError, f.Error)
	set(HeaderAttempts, strconv.Itoa(f.Attempts))
	set(HeaderKeptAt, strconv.FormatInt(at.UnixNano(), 10))
	set(HeaderErrorDest, f.ErrorDest)
	set(HeaderErrorCode, f.ErrorCode)
	set(HeaderErrorData, f.ErrorData)
}

// Letter is what knc dlq shows of a kept letter.
type Letter struct {
	ID         string `json:"id"`
	Namespace  string `json:"namespace"`
	Reason     string `json:"reason"`
	SourceKind string `json:"sourceKind"`
	Source     string `json:"source"`
	TargetKind string `json:"targetKind"`
	Target     string `json:"target"`
	Attempts   int    `json:"attempts"`
	Status     int    `json:"status,omitempty"`
	Error      string `json:"error,omitempty"`
	// Destination is the URL that failed, with its credentials masked.
	Destination string    `json:"destination,omitempty"`
	AcceptedAt  time.Time `json:"acceptedAt,omitzero"`
	KeptAt      time.Time `json:"keptAt"`
	// ReplayedAt is when it was last replayed; zero when never.
	ReplayedAt   time.Time         `json:"replayedAt,omitzero"`
	KnativeError map[string]string `json:"knativeError,omitempty"`
	Event        EventSummary      `json:"event"`
	// Headers are the event's pass-through headers; Data its payload, in
	// base64. Both only in knc dlq show.
	Headers map[string][]string `json:"headers,omitempty"`
	Data    string              `json:"data,omitempty"`
}

// EventSummary are the CloudEvent attributes of a letter.
type EventSummary struct {
	ID          string            `json:"id"`
	Type        string            `json:"type"`
	Source      string            `json:"source"`
	Subject     string            `json:"subject,omitempty"`
	Time        string            `json:"time,omitempty"`
	ContentType string            `json:"datacontenttype,omitempty"`
	Extensions  map[string]string `json:"extensions,omitempty"`
}

// Read makes the Letter of a stored message, seq in the stream of
// namespace; withData adds its pass-through headers and data.
func Read(namespace string, seq uint64, m *nats.Msg, withData bool) (Letter, error) {
	ev, err := cehttp.FromNATS(m)
	if err != nil {
		return Letter{}, fmt.Errorf("letter %s: %w", ID(namespace, seq), err)
	}
	h := m.Header
	l := Letter{
		ID:          ID(namespace, seq),
		Namespace:   namespace,
		Reason:      h.Get(HeaderReason),
		SourceKind:  h.Get(HeaderSourceKind),
		Source:      h.Get(HeaderSource),
		TargetKind:  h.Get(HeaderTargetKind),
		Target:      h.Get(HeaderTarget),
		Error:       h.Get(HeaderError),
		Destination: h.Get(HeaderDestination),
		AcceptedAt:  unixNano(h.Get(headerAccepted)),
		KeptAt:      unixNano(h.Get(HeaderKeptAt)),
		Event: EventSummary{
			ID: ev.ID(), Type: ev.Type(), Source: ev.Source(), Subject: ev.Subject(),
			ContentType: ev.DataContentType(),
		},
	}
	l.Attempts, _ = strconv.Atoi(h.Get(HeaderAttempts))
	l.Status, _ = strconv.Atoi(h.Get(HeaderStatus))
	if !ev.Time().IsZero() {
		l.Event.Time = ev.Time().UTC().Format(time.RFC3339Nano)
	}
	for k, v := range ev.Extensions() {
		if l.Event.Extensions == nil {
			l.Event.Extensions = map[string]string{}
		}
		if l.Event.Extensions[k], err = types.Format(v); err != nil {
			l.Event.Extensions[k] = fmt.Sprint(v)
		}
	}
	for name, k := range map[string]string{"knativeerrordest": HeaderErrorDest, "knativeerrorcode": HeaderErrorCode, "knativeerrordata": HeaderErrorData} {
		if v := h.Get(k); v != "" {
			if l.KnativeError == nil {
				l.KnativeError = map[string]string{}
			}
			l.KnativeError[name] = v
		}
	}
	if withData {
		if v := h.Get(cehttp.NATSPassThrough); v != "" {
			l.Headers = cehttp.DecodeHeader(v)
		}
		if len(ev.Data()) > 0 {
			l.Data = base64.StdEncoding.EncodeToString(ev.Data())
		}
	}
	return l, nil
}

func unixNano(s string) time.Time {
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return time.Time{}
	}
	return time.Unix(0, n).UTC()
}
