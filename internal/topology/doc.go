// Package topology draws an event topology: Brokers and Channels, their
// Triggers and Subscriptions, and the subscribers, replies and dead-letter
// sinks these deliver to, grouped by namespace. It writes a Graph as
// Mermaid (for Markdown and pull requests), as Graphviz DOT, and as SVG
// and PNG laid out by Graphviz's dot, which runs as WebAssembly inside the
// process, so that no external tool is needed. Select draws one part of a
// large graph; Changes compares the graphs of two revisions.
//
// Both sides of knc draw with it, so that the two look alike: knc graph
// builds its Graph from the checked manifests (compiler/graph), the
// runtime's live page from the routing table it serves (runtime/ui). It
// knows the runtime only by the routing table, and the compiler not at
// all. Every output is deterministic: the same graph gives the same bytes.
package topology
