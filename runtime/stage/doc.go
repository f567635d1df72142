// Package stage runs the stages of knc's data plane: a Stage pulls from
// one JetStream durable consumer exactly as many messages as it has free
// workers, so that no message waits in a client buffer while its AckWait
// runs out, and hands each to a function that settles it (package
// runtime/pipeline's Processor). A route stage also trims its ingress
// stream in bulk (trim.go). Pool, the workers of a stage, also runs the
// first attempts of a source's lane.
//
// This package must not import the other runtime packages: it knows
// JetStream messages, not events.
package stage
