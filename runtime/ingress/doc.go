// Package ingress is the runtime's HTTP listener: the ingress of every
// Broker and Channel (POST /brokers/NS/NAME, /channels/NS/NAME), /status,
// /metrics, /healthz and /readyz. With Config.SeparateAdmin, /status and
// /metrics are served only by a second, admin listener (ServeAdmin), so
// that whoever may send events cannot read them.
//
// An event is answered 202 only once its Store (JetStream, in package
// engine) has acknowledged it, 503 when it cannot be stored, at once
// while the Store reports a fault (its volume is full). A Broker
// gives an event without knativebrokerttl the default TTL, decrements the
// TTL of one that has it and refuses it (400) when that reaches 0, as
// Knative's ingress does. The request headers that pass through
// (cehttp.PassThrough) are stored with the event, in knc-headers. Events that
// arrive while a store is in flight are stored together, as one batch
// message (group commit, batch.go); each is answered once its batch is
// acknowledged. An Endpoint with several ingress subjects (shards) fills
// one while it has room and overflows to the next.
//
// Limits (limits.go) bound header size, read, write and idle times and the
// requests in progress (429 beyond); TLS and bearer tokens per ingress are
// in security.go.
//
// The package knows the runtime only through two interfaces: Runtime,
// which maps a path to its Endpoint in the current routing table and
// tells whether events are taken, and Store, which stores a message and
// calls back with JetStream's acknowledgement. It must not import
// runtime/engine, cuelang.org/go, sigs.k8s.io/kustomize or any package
// under github.com/knc-dev/knc/compiler.
package ingress
