// Package graph draws a project's event topology: Brokers and Channels,
// their Triggers and Subscriptions, and the subscribers, replies and
// dead-letter sinks these deliver to, grouped by namespace. It writes the
// topology as Mermaid (for Markdown and pull requests), as Graphviz DOT,
// and as SVG and PNG laid out by Graphviz's dot, which runs as WebAssembly
// inside the process, so that no external tool is needed. Select draws one
// part of a large graph.
//
// A graph of one revision is built from the checked model and its routing
// table; Changes compares the graphs of two revisions, which knc diff shows.
// Every output is deterministic: the same project gives the same bytes.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or the
// runtime's engine; of the runtime it reads only the routing table.
package graph
