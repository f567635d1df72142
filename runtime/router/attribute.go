package router

import (
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
)

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

// get returns the canonical string form of the attribute and whether the event
// has it. The required attributes (specversion, id, source, type) are always
// present. time keeps the offset it was sent with (RFC 3339), as CESQL sees it.
func (v *eventView) get(a attribute) (string, bool) {
	c := v.ctx
	switch a.kind {
	case attrType:
		return c.Type, true
	case attrSource:
		if !v.haveSource {
			v.source, v.haveSource = c.Source.String(), true
		}
		return v.source, true
	case attrID:
		return c.ID, true
	case attrSpecVersion:
		return v.specVersion, true
	case attrSubject:
		if c.Subject == nil {
			return "", false
		}
		return *c.Subject, true
	case attrDataContentType:
		if c.DataContentType == nil {
			return "", false
		}
		return *c.DataContentType, true
	case attrTime:
		if c.Time == nil {
			return "", false
		}
		if !v.haveTime {
			v.time, v.haveTime = c.Time.Time.Format(time.RFC3339Nano), true
		}
		return v.time, true
	case attrDataSchema:
		if c.DataSchema == nil {
			return "", false
		}
		if !v.haveDSchema {
			v.dataSchema, v.haveDSchema = c.DataSchema.String(), true
		}
		return v.dataSchema, true
	}
	raw, ok := c.Extensions[a.name]
	if !ok || raw == nil {
		return "", false
	}
	if s, ok := raw.(string); ok {
		return s, true
	}
	s, err := types.Format(raw)
	if err != nil {
		// The SDK validates extension values when they are set, so this is an
		// event built by hand with an unsupported type: it has no string form
		// and so cannot equal any filter value.
		return "", false
	}
	return s, true
}
