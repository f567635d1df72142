// Package kept describes kept letters: the deliveries that ended without
// success (no dead-letter sink, the sink refused them too, a
// non-retryable answer, a reply that would exceed its TTL), stored so that
// people can see them and send them again instead of losing them.
//
// A letter is one NATS message of its namespace's stream
// (knc_kept_<namespace>): the event as the ingress stored it, and headers
// that say where it was going and why it failed (letter.go). The stream
// keeps letters for a bounded time and size; the runtime (runtime/engine)
// stores and evicts them, and serves them on its admin listener to knc
// dlq (api.go holds the shapes both sides read).
//
// This package imports no other package of the runtime but cehttp, so
// that the CLI can read letters without the engine.
package kept
