// Package routing defines the routing table, the one contract between the
// compiler and the runtime.
//
// The compiler produces a Table from the manifests; the runtime serves it.
// The table is encoded as JSON with a versioned apiVersion
// (routing.knc.dev/v1alpha1) and documented in docs/routing-table.md.
//
// This package must stay a leaf: it imports only the standard library, so
// that both the compiler and the runtime can depend on it without depending
// on each other.
package routing
