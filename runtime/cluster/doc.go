// Package cluster is the Kubernetes side of knc's runtime: what `knc runtime`
// adds to the engine when it runs in a cluster.
//
// A Runtime serves the routing table mounted from the ConfigMap that
// `knc build` generates (re-reading it when the kubelet swaps the file),
// watches the Brokers, Triggers, Channels and Subscriptions of the namespaces
// it serves, resolves the references the compiler left open through the
// Addressable duck type (status.address.url of the live referent, watched so
// that a change re-programs the data plane), and reports each object's
// status through its /status subresource. It never writes anything else:
// its RBAC lets it read the four kinds, PingSources and Addressables, and
// patch only their status. The PingSources of the table are fired whether
// or not the cluster serves their kind; their status is written where it
// does.
//
// The status is the one local mode reports (package status, the same
// condition types and reasons), with what only the cluster knows laid over
// it: observedGeneration is the live metadata.generation; a live spec that
// differs from the compiled one is Ready=False with reason NotCompiled (the
// runtime keeps serving the compiled routes); a Trigger whose Broker does not
// exist, or is not ready, is not ready, and so is a Subscription whose
// Channel is missing or not ready; Channel status.subscribers carries the
// uid and generation of each live Subscription.
//
// Knative's apis.Condition and metav1.Condition have the same fields but
// two: a Knative condition has a severity and no observedGeneration. The
// objects of this package satisfy the conditions.Getter and Setter
// interfaces of github.com/fluxcd/pkg/runtime by reporting the status's
// observedGeneration as every condition's, and by keeping the severity of
// a condition of the same type that is already there (knc's own
// conditions are all of error severity, which is the empty one).
//
// Drift is found by hashing the live spec exactly as the compiler hashes
// the compiled one (SpecHash): both decode into the spec types of package
// internal/knative/spec and hash with spec.Hash, so a spec edited by hand
// is caught even though its knc.dev/spec-hash annotation still names the
// compiled spec.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or
// anything under github.com/knc-dev/knc/compiler: the runtime starts from
// the routing table and the live objects, never from manifests. It never
// prints; it logs through the slog.Logger it is given.
package cluster
