// Package spec holds the specs of Brokers, Triggers, Channels and
// Subscriptions as knc compiles them, and the one encoding of a spec that
// is hashed: the compiler hashes the spec it writes (package compiler/model
// names these types), and the runtime hashes a live object's spec after
// decoding it into the same types, so that both agree on what "the same
// spec" means without a second description of its fields.
//
// This package must import nothing but the standard library and
// internal/knative.
package spec
