// Package status computes the Knative status of the objects a routing table
// was compiled from: conditions, addresses and resolved URIs of Brokers,
// Triggers, Channels and Subscriptions.
//
// Compute is a pure function of the table, the destinations' resolution
// results, whether the data plane serves each Broker and Channel, and the
// previously reported status (so that lastTransitionTime changes only when a
// condition's status does). The local runtime serves its result at
// GET /status; cluster mode writes the same values to each object's /status
// subresource.
//
// Conditions follow the Knative rules for apis.Condition: a Ready condition
// summarises the error-severity conditions of each object (any False makes
// Ready False, any Unknown makes it Unknown), reasons are CamelCase words,
// and severity is omitted for errors.
//
// This package imports only the standard library, internal/knative,
// internal/routing and runtime/resolve. It must not import cuelang.org/go, sigs.k8s.io/kustomize
// or anything under github.com/knc-dev/knc/compiler, and it never logs.
package status
