// Package flows compiles Sequences and Parallels (flows.knative.dev/v1)
// into the Channels and Subscriptions that Knative Eventing's flows
// controllers create for them: the same names, the same wiring of steps,
// replies, filters and subscribers, the same delivery per step or branch.
// The routes stage then compiles those as it compiles the repository's own
// Channels and Subscriptions, so that the runtime runs a Sequence or a
// Parallel through the Channels it is made of.
//
// One difference is deliberate. Knative's controllers create the channel
// of spec.channelTemplate's kind directly (an InMemoryChannel, say); knc
// serves messaging.knative.dev/v1 Channels, each backed by a channel class
// (its spec.channelTemplate), so the generated objects are Channels whose
// spec.channelTemplate is the Sequence's or Parallel's, and knc's default
// channel class when it has none. The Subscriptions refer to those
// Channels.
package flows
