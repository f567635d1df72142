package ping

import (
	"encoding/base64"
	"fmt"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/uuid"
	"github.com/robfig/cron/v3"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"

	// Time zones come from Go's own copy, so that every replica reads a
	// schedule the same way whatever its image holds.
	_ "time/tzdata"
)

// parser reads schedules as Knative's adapter does: five fields, an
// optional leading seconds field, descriptors, and a CRON_TZ prefix.
var parser = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// ParseSchedule reads a schedule in a time zone. Without a time zone it is
// UTC, the zone Knative's adapter runs in, whatever the machine's.
func ParseSchedule(schedule, timezone string) (cron.Schedule, error) {
	if timezone == "" {
		timezone = "UTC"
	}
	s, err := parser.Parse("CRON_TZ=" + timezone + " " + schedule)
	if err != nil {
		return nil, fmt.Errorf("schedule %q in time zone %q: %w", schedule, timezone, err)
	}
	return s, nil
}

// idSpace is the UUID namespace of event ids.
var idSpace = uuid.NewSHA1(uuid.NameSpaceURL, []byte("https://knc.dev/pingsource"))

// EventID is the id of the event PingSource namespace/name sends for the
// tick scheduled at tick: the same in every replica, and different for
// every tick. The generation is left out on purpose: while replicas roll
// from one generation to the next, they would otherwise send one tick
// twice.
func EventID(namespace, name string, tick time.Time) string {
	return uuid.NewSHA1(idSpace, []byte(namespace+"/"+name+"@"+tick.UTC().Format(time.RFC3339Nano))).String()
}

// NewEvent makes the event ps sends for tick, with the attributes of
// Knative's mt-ping adapter: its type, source, the ceOverrides extensions,
// and data (dataBase64 decoded) with contentType as datacontenttype. The
// id is EventID, and time the scheduled tick, so that every replica makes
// the same event.
func NewEvent(ps *routing.PingSource, tick time.Time) (*event.Event, error) {
	e := event.New()
	e.SetID(EventID(ps.Namespace, ps.Name, tick))
	e.SetType(knative.PingSourceEventType)
	e.SetSource(knative.PingSourceEventSource(ps.Namespace, ps.Name))
	e.SetTime(tick.UTC())
	for k, v := range ps.Extensions {
		if err := e.Context.SetExtension(k, v); err != nil {
			return nil, fmt.Errorf("pingsource %s: extension %q: %w", ps.Key(), k, err)
		}
	}
	var data []byte
	switch {
	case ps.DataBase64 != "":
		b, err := base64.StdEncoding.DecodeString(ps.DataBase64)
		if err != nil {
			return nil, fmt.Errorf("pingsource %s: dataBase64: %w", ps.Key(), err)
		}
		data = b
	case ps.Data != "":
		data = []byte(ps.Data)
	}
	if data != nil {
		if err := e.SetData(ps.ContentType, data); err != nil {
			return nil, fmt.Errorf("pingsource %s: data: %w", ps.Key(), err)
		}
	}
	if err := e.Validate(); err != nil {
		return nil, fmt.Errorf("pingsource %s: %w", ps.Key(), err)
	}
	return &e, nil
}
