// Package pipeline is what the stages of knc's data plane do with the
// messages they pull: it routes each event to the Triggers or Subscriptions
// it matches, attempts its deliveries, retries them, dead-letters or drops
// them, settles every message with JetStream, and counts what happened.
// Package runtime/engine sets up the streams and consumers these stages
// read and runs them; its documentation describes the design as a whole.
//
// # Boundaries
//
//   - A Plan (plan.go) is one routing table made ready to serve: sources
//     and targets with their NATS names (names.go), compiled filters,
//     resolved destinations, metrics, lanes and ingress endpoints. It is
//     immutable once BuildPlan returns; a reload swaps in a new one.
//   - A Processor (processor.go) handles the messages of the route,
//     dispatch and unpark stages: RouteMsg, DispatchMsg and UnparkMsg. It
//     reads the plan current when each message starts, and reaches
//     JetStream only through a Publisher and subscribers only through a
//     Sender; it counts with the metrics (package metrics) bound
//     to the plan's sources and targets.
//   - The stages that call these (package runtime/stage) pull from one
//     durable consumer exactly as many messages as they have free workers.
//   - A Lane (direct.go) makes the first attempts of one source's
//     deliveries, bounding those in progress per target.
//
// # Where each thing happens
//
//   - Where is a message acknowledged, retried, released or terminated?
//     In settle (settle.go), and nowhere else: every handler returns a
//     verdict, and settle maps it to Ack, NakWithDelay, Nak or Term, and
//     logs what JetStream could not be told.
//   - Where is an event routed? RouteMsg and routeBatch (route.go), which
//     make the first attempt of each delivery on the source's lane or store
//     it (direct.go, routed).
//   - Where is a delivery attempted? attempt.deliver (attempt.go), for the
//     first attempt (from direct.go) as for the later ones (DispatchMsg,
//     dispatch.go).
//   - Where is a retry decided? attempt.retry, with delivery.RetryDelay; the
//     retry itself is the verdict retryAfter, a NakWithDelay, or for a first
//     attempt a delivery stored with its attempts and next time.
//   - Where is an event dead-lettered? attempt.deliver stores it on the
//     dead subject once retries are exhausted; attempt.deadLetter delivers
//     it from there to the sink.
//   - Where is an event kept? attempt.keep (keep.go) stores a delivery that
//     ended without success as a kept letter through the Keeper, instead
//     of dropping it.
//   - Where is an event dropped? attempt.drop, counted by reason (package
//     metrics); and a stored message that holds no event is terminated.
//   - Where is an event held while its target is not ready? DispatchMsg
//     moves it to a hold subject, UnparkMsg (route.go) moves it back.
//   - Where are spans made? With a Tracer (ProcessorConfig.Tracer), the
//     ingress makes one per request, routed.route one per event routed,
//     attempt.deliver and attempt.deadLetter one per attempt, and the
//     replies one per try;
//     each is parented by the trace context stored with the event
//     (trace.go, package runtime/tracing).
//
// Accounting (package metrics): every delivery, one event matched to one
// Trigger or Subscription, is counted as accepted when the route stage
// stores it, or with its outcome when its first attempt ends it, and
// again when it ends delivered, dead-lettered, kept or dropped (by reason),
// so that per target accepted = delivered + dead-lettered + kept +
// dropped once nothing is pending (see metrics/accounting.go).
//
// This package must not import runtime/engine, runtime/natsserver,
// cuelang.org/go, sigs.k8s.io/kustomize or any package under
// github.com/knc-dev/knc/compiler: it starts from a routing.Table and
// reaches NATS only through the jetstream.Msg and jetstream.Consumer it is
// given and its Publisher.
package pipeline
