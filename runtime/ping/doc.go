// Package ping fires the PingSources of a routing table: on each tick of a
// PingSource's cron schedule, in its time zone, it makes the CloudEvent
// Knative's mt-ping adapter sends and hands it to the runtime, which
// stores it as its ingress stores an event it accepts.
//
// Several runtime replicas fire the same ticks. Each event's id (and the
// JetStream message ID it is stored with) is derived from the PingSource's
// namespace and name and the tick's scheduled time, so that every replica
// makes the same event for a tick and JetStream's de-duplication keeps one.
// A replica fires a tick only while it is at most MaxLateness late, well
// within JetStream's duplicate window; ticks that pass while no replica
// runs are not caught up, as in Knative.
//
// The Clock is the wall clock, or for tests a clock that a file steps
// (FileClock), so that tests need not wait for minutes.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or
// any package under github.com/knc-dev/knc/compiler.
package ping
