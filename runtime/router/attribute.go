package router

import (
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// attributeKind says where an attribute lives in an event context, so that
// the context attributes are read from their struct fields instead of through
// the SDK's generic (and allocating) accessors.
type attributeKind uint8

const (
	attrExtension attributeKind = iota
	attrSpecVersion
	attrID
	attrSource
	attrType
	attrSubject
	attrTime
	attrDataSchema
	attrDataContentType
	// attrDataMediaType and attrDataContentEncoding are not attributes of a
	// 1.0 event, but Knative's attribute lookup answers them: the media type
	// of datacontenttype, and 0.3's datacontentencoding.
	attrDataMediaType
	attrDataContentEncoding
	// attrBrokerTTL is the Broker's own extension, which Knative's filter
	// deletes before filtering: no filter sees it.
	attrBrokerTTL
)

// brokerTTLExtension is the extension a Broker counts an event's remaining
// hops in.
const brokerTTLExtension = "knativebrokerttl"

// zeroTime is the text Knative's attribute lookup gives the time of an event
// without one: the zero time, in RFC 3339.
const zeroTime = "0001-01-01T00:00:00Z"

// attribute is a CloudEvents attribute name resolved at compile time.
type attribute struct {
	name string
	kind attributeKind
}

func newAttribute(name string) attribute {
	kind := attrExtension
	switch name {
	case "specversion":
		kind = attrSpecVersion
	case "id":
		kind = attrID
	case "source":
		kind = attrSource
	case "type":
		kind = attrType
	case "subject":
		kind = attrSubject
	case "time":
		kind = attrTime
	case "dataschema", "schemaurl":
		// schemaurl is the 0.3 name of dataschema; Knative's attribute
		// lookup (pkg/eventfilter/attributes) answers either name with
		// the event's data schema, whatever its spec version.
		kind = attrDataSchema
	case "datacontenttype":
		kind = attrDataContentType
	case "datamediatype":
		kind = attrDataMediaType
	case "datacontentencoding":
		kind = attrDataContentEncoding
	case brokerTTLExtension:
		kind = attrBrokerTTL
	}
	return attribute{name: name, kind: kind}
}

// eventView reads the attributes of one event as strings. It lives on the
// stack of one Match call and remembers the attributes whose string form has
// to be built (source, time, dataschema), so that many Triggers looking at the
// same attribute build it once.
type eventView struct {
	event *event.Event
	ctx   *event.EventContextV1
	// specVersion is the version the event was sent as, which ctx no longer
	// says for an event converted from another version.
	specVersion string

	source, time, dataSchema          string
	haveSource, haveTime, haveDSchema bool

	// withoutTTL is the event CESQL sees: event, or a copy without the
	// Broker's TTL extension, made on first use.
	withoutTTL     *event.Event
	haveWithoutTTL bool
}

func newEventView(e *event.Event) eventView {
	if e == nil || e.Context == nil {
		return eventView{event: e, ctx: &event.EventContextV1{}, specVersion: event.CloudEventsVersionV1}
	}
	if ctx, ok := e.Context.(*event.EventContextV1); ok {
		return eventView{event: e, ctx: ctx, specVersion: event.CloudEventsVersionV1}
	}
	// Events of other spec versions are converted once; the runtime receives
	// 1.0 events, so this path is rare.
	return eventView{event: e, ctx: e.Context.AsV1(), specVersion: e.Context.GetSpecVersion()}
}

// get returns the attribute's value as Knative's exact, prefix and suffix
// filters compare it, and whether the event has it.
func (v *eventView) get(a attribute) (string, bool) {
	s, _, ok := v.lookup(a)
	return s, ok
}

// lookup reads an attribute as Knative's attribute lookup does
// (pkg/eventfilter/attributes): the context attributes are always present,
// as the empty string when unset, and time as the zero time; an extension is
// present when the event has it, and its string form is that of its typed
// value. isString says whether the value is a string, which the legacy
// filter.attributes requires of a value it compares. time keeps the offset
// it was sent with (RFC 3339), as CESQL sees it.
func (v *eventView) lookup(a attribute) (value string, isString, ok bool) {
	c := v.ctx
	switch a.kind {
	case attrType:
		return c.Type, true, true
	case attrSource:
		if !v.haveSource {
			v.source, v.haveSource = c.Source.String(), true
		}
		return v.source, true, true
	case attrID:
		return c.ID, true, true
	case attrSpecVersion:
		return v.specVersion, true, true
	case attrSubject:
		if c.Subject == nil {
			return "", true, true
		}
		return *c.Subject, true, true
	case attrDataContentType:
		if c.DataContentType == nil {
			return "", true, true
		}
		return *c.DataContentType, true, true
	case attrDataMediaType:
		if c.DataContentType == nil {
			return "", true, true
		}
		mediaType, _, _ := strings.Cut(*c.DataContentType, ";")
		if len(mediaType) < len(*c.DataContentType) {
			mediaType = strings.TrimSpace(mediaType)
		}
		return mediaType, true, true
	case attrDataContentEncoding:
		if v.event == nil || v.event.Context == nil {
			return "", true, true
		}
		return v.event.Context.DeprecatedGetDataContentEncoding(), true, true
	case attrTime:
		if c.Time == nil {
			return zeroTime, true, true
		}
		if !v.haveTime {
			v.time, v.haveTime = c.Time.Time.Format(time.RFC3339Nano), true
		}
		return v.time, true, true
	case attrDataSchema:
		if c.DataSchema == nil {
			return "", true, true
		}
		if !v.haveDSchema {
			v.dataSchema, v.haveDSchema = c.DataSchema.String(), true
		}
		return v.dataSchema, true, true
	case attrBrokerTTL:
		return "", false, false
	}
	raw, ok := c.Extensions[a.name]
	if !ok || raw == nil {
		return "", false, false
	}
	if s, ok := raw.(string); ok {
		return s, true, true
	}
	s, err := types.Format(raw)
	if err != nil {
		// The SDK validates extension values when they are set, so this is an
		// event built by hand with an unsupported type: it has no string form
		// and so cannot equal any filter value.
		return "", false, false
	}
	return s, false, true
}

// cesqlEvent returns the event as CESQL sees it: without the Broker's TTL
// extension, which Knative deletes before filtering. The copy is made once
// per event, only for an event that has the extension, and only for an
// expression that may read it (readsTTL).
func (v *eventView) cesqlEvent(readsTTL bool) *event.Event {
	if !readsTTL {
		return v.event
	}
	if v.haveWithoutTTL {
		return v.withoutTTL
	}
	v.withoutTTL, v.haveWithoutTTL = v.event, true
	e := v.event
	if e == nil || e.Context == nil {
		return e
	}
	if _, ok := v.ctx.Extensions[brokerTTLExtension]; !ok {
		return e
	}
	copied := *e
	if ctx, ok := e.Context.(*event.EventContextV1); ok {
		// A shallow copy with its own extension map: CESQL only reads it.
		without := *ctx
		without.Extensions = make(map[string]any, len(ctx.Extensions)-1)
		for name, value := range ctx.Extensions {
			if name != brokerTTLExtension {
				without.Extensions[name] = value
			}
		}
		copied.Context = &without
	} else {
		copied.Context = e.Context.Clone()
		// Deleting an extension (a nil value) cannot fail.
		_ = copied.Context.SetExtension(brokerTTLExtension, nil)
	}
	v.withoutTTL = &copied
	return v.withoutTTL
}
