// Package knative names the parts of Knative Eventing's API that knc
// compiles and runs: the API groups and version of Brokers, Triggers,
// Channels and Subscriptions, their kinds, resource names and CRD
// categories, and how knc labels a kind in its messages.
//
// Both halves of knc use these names: the compiler writes them into CRDs,
// RBAC rules and diagnostics, and the runtime reads and patches objects by
// them. Keeping them here means that a group or a plural is spelled once.
//
// It imports only the standard library, and nothing of knc's, so that the
// compiler and the runtime can both import it without importing each other.
package knative
