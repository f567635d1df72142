// Package routetest reads route test files (*.knctest.yaml) and checks
// their cases against a compiled routing table with the runtime's own
// matcher: which Triggers of a Broker, or Subscriptions of a Channel, an
// event reaches, and where it ends after forwards and declared replies.
//
// It needs no network and no runtime process; the table is what 'knc
// build' compiles, so a case that passes here routes the same in a cluster.
package routetest
