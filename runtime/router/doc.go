// Package router decides which Triggers of a Broker an event is delivered to.
//
// Compile turns the filters of one Broker's Triggers, as the routing table
// holds them, into a Matcher. Matcher.Match is the runtime's hot path: it
// returns the Triggers an event passes without evaluating every Trigger, by
// indexing each Trigger under one condition every matching event must meet
// (an exact attribute value, or an attribute prefix) and fully evaluating only
// the Triggers whose index entry the event hits, plus those that have no such
// condition. Matcher.Explain evaluates every Trigger and says why each one
// matched or not, for `knc route`.
//
// The semantics are those of Knative Eventing Trigger filters:
// spec.filter.attributes (every key present, non-empty values equal) and
// spec.filters (exact, prefix, suffix, all, any, not, cesql; all must pass;
// a CESQL evaluation error is no match).
//
// This package is part of the runtime. It may import internal/routing,
// internal/cesql and the CloudEvents SDK; it must not import cuelang.org/go,
// sigs.k8s.io/kustomize or anything under github.com/knc-dev/knc/compiler.
// It never logs: Compile returns errors and Explain returns reasons.
package router
