// Package ui serves the runtime's live page at /ui: the topology of the
// routing table, drawn by internal/topology as knc graph draws it, each
// Broker's, Channel's, Trigger's and Subscription's Ready condition, and
// their counters, sent again as server-sent events while they change.
//
// The page reads the runtime through Inputs only: the routing table, the
// statuses /status serves, and the Prometheus gatherer /metrics serves, so
// that its numbers are those of /metrics. Recent, opt-in, keeps the
// attributes of the last events each route matched, never their data.
//
// Its script and style sheet are embedded: the page loads nothing from
// elsewhere and works offline. So is a WebAssembly Graphviz
// (static/graphviz), with which the page lays out the drawing's DOT in
// the browser when the runtime has no Draw, as the runtime's own binary,
// which links no layout engine, has none.
//
// Like every runtime package, it must not import the compiler
// (github.com/knc-dev/knc/compiler/...): it builds its graph from the
// routing table, the one contract between the two.
package ui
