package model

import (
	"encoding/base64"
	"encoding/json"
	"strings"

	"github.com/robfig/cron/v3"

	// Time zones are read from Go's own copy, so that a schedule's verdict
	// does not depend on the machine knc runs on.
	_ "time/tzdata"
)

// pingCron reads schedules as Knative's PingSource validation does: five
// fields, an optional leading seconds field, and descriptors.
var pingCron = cron.NewParser(cron.SecondOptional | cron.Minute | cron.Hour | cron.Dom | cron.Month | cron.Dow | cron.Descriptor)

// Validate checks one PingSource as Knative's admission does, after its
// defaulting (an empty schedule is every minute).
func (p *PingSource) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &p.Metadata)
	s := &p.Spec
	schedule := s.Schedule
	if schedule == "" {
		schedule = DefaultPingSchedule
	}
	if strings.Contains(schedule, "@every") {
		errs.Add("spec.schedule", "%q uses @every, which PingSource does not support; write the interval as a cron schedule such as */5 * * * *", schedule)
	}
	withZone := schedule
	if s.Timezone != "" {
		withZone = "CRON_TZ=" + s.Timezone + " " + schedule
	}
	if _, err := pingCron.Parse(withZone); err != nil {
		if strings.HasPrefix(err.Error(), "provided bad location") {
			errs.Add("spec.timezone", "%q is not a time zone of the IANA database, such as Europe/Paris or UTC: %v", s.Timezone, err)
		} else {
			errs.Add("spec.schedule", "%q is not a cron schedule such as \"*/5 * * * *\" or @hourly: %v", schedule, err)
		}
	}
	validateSourceSpec(&errs, &s.SourceSpec, refContext{features: f})
	switch {
	case s.Data != "" && s.DataBase64 != "":
		errs.Add("spec", "sets both data and dataBase64; give only one")
	case s.DataBase64 != "":
		decoded, err := base64.StdEncoding.DecodeString(s.DataBase64)
		if err != nil {
			errs.Add("spec.dataBase64", "is not standard base64: %v", err)
		} else if s.ContentType == "application/json" && !isJSONObject(decoded) {
			errs.Add("spec.dataBase64", "decodes to %q, which is not a JSON object as contentType application/json requires", truncate(string(decoded), 40))
		}
	case s.Data != "":
		if s.ContentType == "application/json" && !isJSONObject([]byte(s.Data)) {
			errs.Add("spec.data", "is not a JSON object as contentType application/json requires; fix it, or set another contentType")
		}
	}
	if p.Status != nil {
		validateStatus(&errs, "status", &p.Status.Status)
	}
	return errs
}

// ValidateDataSize checks data and dataBase64 against the data-max-size
// of the cluster's config-ping-defaults, as Knative's admission does: the
// length of each as written, when the bound is not -1.
func (p *PingSource) ValidateDataSize(maxSize int64) FieldErrors {
	var errs FieldErrors
	if maxSize < 0 {
		return errs
	}
	if n := int64(len(p.Spec.DataBase64)); n > maxSize {
		errs.Add("spec.dataBase64", "is %d bytes long, more than the %d of data-max-size (pingDefaults in knc.yaml, config-ping-defaults in the cluster); send less, or raise the bound", n, maxSize)
	}
	if n := int64(len(p.Spec.Data)); n > maxSize {
		errs.Add("spec.data", "is %d bytes long, more than the %d of data-max-size (pingDefaults in knc.yaml, config-ping-defaults in the cluster); send less, or raise the bound", n, maxSize)
	}
	return errs
}

// isJSONObject is Knative's test of data sent as application/json: it
// must decode into a JSON object (null does too).
func isJSONObject(b []byte) bool {
	var m map[string]any
	return json.Unmarshal(b, &m) == nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
