// Package engine is knc's data plane: it serves a routing table with an
// embedded NATS JetStream server, accepting CloudEvents at the address of
// every Broker and Channel and delivering them to Triggers and
// Subscriptions with Knative's delivery semantics.
//
// # Design
//
// Every Broker and Channel (a source) has two JetStream streams in file
// storage, an ingress stream and a delivery stream, and three stages, each a
// durable pull consumer:
//
//   - ingress (package runtime/ingress): POST /brokers/NS/NAME or
//     /channels/NS/NAME stores the event in the source's ingress stream and
//     answers 202 only once JetStream has acknowledged the write; 503 when
//     it cannot be stored. A Broker's ingress decrements knativebrokerttl
//     and stores the headers that pass through (cehttp.PassThrough) with
//     the event, in knc-headers. Events that arrive while a store is in flight are
//     stored together, as one batch message. The engine gives it each
//     source's ingress.Endpoint and publishes its batches (ingress.go).
//     Replies are stored one per message. With Options.IngressShards, a
//     source has several ingress streams, each with its own route stage;
//     events overflow to the next shard when one has all the batches in
//     flight it takes, and are routed in no particular order across
//     shards.
//   - route: reads the ingress stream, evaluates the Broker's Triggers once
//     per event (router.Matcher; a Channel matches all its Subscriptions),
//     and makes the first attempt of each delivery itself, on the source's
//     lane of workers (pipeline.Lane): storing a delivery message and handing
//     it to another stage costs more than the attempt, and most deliveries
//     need no other. A delivery is stored in the delivery stream, on
//     subject knc.<kind>.<source>.send.<target>, only when its first
//     attempt asks for a retry (with the attempts made and when the next is
//     due), or when the target cannot take an attempt now: it is not ready
//     (held, below), or it has had no free slot for a while, so that a slow
//     subscriber does not hold back the others. Two Triggers with the same
//     subscriber make two deliveries. The ingress message is acknowledged
//     only once every delivery of its events ended or is stored; a retry
//     after a partial failure attempts again what was not stored and
//     re-publishes the rest with the same message IDs, which JetStream
//     deduplicates. The ingress stream keeps what the route stage
//     acknowledged until a trimmer purges it in bulk, shortly after; the
//     delivery stream is a work queue, whose backlog is its size.
//   - dispatch: one consumer per source (not per target: a thousand
//     Triggers are one consumer) reads the send and dead subjects and makes
//     one HTTP attempt per JetStream delivery. A retryable failure is a
//     NakWithDelay of delivery.RetryDelay, with the attempt number taken
//     from the message's NumDelivered (plus the route stage's attempts), so
//     retries and their count survive a crash. After the last attempt, or a
//     non-retryable answer, the event goes (with Knative's knativeerror*
//     extensions) to the dead stage of the same target, which delivers it
//     to the dead-letter sink with the same retries; without a sink, or
//     when the sink refuses it too, it is kept: stored in its namespace's
//     stream of kept letters (kept.go), bounded in bytes and age, which
//     knc dlq reads and replays through the admin listener (kept_api.go).
//   - unpark: deliveries of a Trigger or Subscription whose destination
//     does not resolve are moved to the hold-send/hold-dead subjects, which
//     no attempt touches; when a reload makes the target ready, this stage
//     moves them back. Nothing is dropped because a reference is missing.
//
// Replies: a Trigger's reply is stored in its Broker's ingress stream (so it
// is routed against every Trigger, the one that produced it included) with
// knativebrokerttl decremented, and dropped with reason "ttl" when that
// would reach 0; failing to store it fails the delivery, which is retried. A
// Subscription's reply is delivered to its reply destination within the same
// attempt, with 1 + retry attempts of its own, as Knative's dispatcher does:
// the subscriber is never called again because its reply failed, and a
// reply that fails them all sends the event to the dead-letter sink.
// Every request carries Kn-Namespace and the event's pass-through headers;
// a Trigger's subscriber gets the event without knativebrokerttl, and its
// 200 with a body that is no CloudEvent is a failed attempt (see
// docs/knative-differences.md). Payload bytes are copied from stage to
// stage unchanged.
//
// Each stage pulls with Fetch exactly as many messages as it has free
// workers, so no message waits in a client buffer while its AckWait runs
// out. Attempts that may outlast AckWait report progress, for the ingress
// message of a first attempt as for a stored delivery.
//
// Hot reload (Engine.Reload) swaps an immutable plan; each request and
// message reads the plan current when it starts. New streams exist before
// the new plan routes to them; accepted events are never discarded.
//
// Shutdown stops the listener, stops pulling, gives attempts in progress
// until shortly before the deadline and then abandons them: their messages
// stay in JetStream and are delivered after a restart with the same data
// directory.
//
// # Where each thing happens
//
// The Engine (engine.go) owns the plan, the streams, consumers and stages
// (package runtime/stage) of each source (setup.go) and the lifecycle:
// Start, Reload, Shutdown.
// What a stage does with each message it pulls, and the plan itself, are
// in package runtime/pipeline: a pipeline.Processor routes events, makes
// delivery attempts and settles each message, reaching JetStream only
// through a pipeline.Publisher (the engine's ackPublisher, publish.go) and
// subscribers through a pipeline.Sender (delivery.Sender). Its package
// documentation says where an event is acknowledged, retried,
// dead-lettered, dropped and held. Here are:
//
//   - the streams and durable consumers of a source, made idempotently
//     (setup.go, connect.go), and the ingress shares of the store;
//   - held deliveries of deleted targets, purged and counted on reload
//     (engine.go, purge.go);
//   - messages JetStream lost from damaged files, counted at start
//     (lost.go);
//   - the ingress's view of the engine: endpoints by path, readiness and
//     storage faults (ingress.go).
//
// Scale-out (connect.go): with Options.NATS the engine uses an external
// NATS cluster instead of the embedded server, and with Options.Cluster
// the embedded server is one node of a JetStream cluster; streams then
// have Options.StreamReplicas copies. Several engines serving one table
// share its streams and durable consumers: every setup step is idempotent
// and retried while the cluster has no leader.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or any
// package under github.com/knc-dev/knc/compiler: it starts from a
// routing.Table, never from manifests.
package engine
