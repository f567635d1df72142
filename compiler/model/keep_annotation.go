package model

import "github.com/knc-dev/knc/compiler/load"

// KeepDeadLetteredAnnotation, set to "true" on a Broker, Channel, Trigger or
// Subscription, asks knc's runtime to keep a copy of each delivery its
// dead-letter sink accepted as a kept letter (knc dlq), as it keeps the
// deliveries that failed for good. A Trigger's or Subscription's own value
// wins over its Broker's or Channel's. Knative does not read it.
const KeepDeadLetteredAnnotation = "knc.dev/keep-dead-lettered"

// KeepDeadLettered reads KeepDeadLetteredAnnotation of m: whether it asks
// for the copies, and whether it is set at all.
func KeepDeadLettered(m *ObjectMeta) (keep, set bool) {
	v, ok := m.Annotations[KeepDeadLetteredAnnotation]
	return v == "true", ok
}

// validateKeepDeadLettered checks KeepDeadLetteredAnnotation: only "true"
// and "false" say something, and a runtime would otherwise silently read
// any other value as "false".
func validateKeepDeadLettered(errs *FieldErrors, m *ObjectMeta) {
	v, ok := m.Annotations[KeepDeadLetteredAnnotation]
	if !ok || v == "true" || v == "false" {
		return
	}
	errs.Add(load.JoinKey("metadata.annotations", KeepDeadLetteredAnnotation),
		"must be \"true\" or \"false\", not %q: write \"true\" to keep a copy of each event the dead-letter sink accepts (knc dlq list), or remove the annotation", v)
}
