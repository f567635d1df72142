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
// Status is written by package statuspatch over the dynamic client, with
// the semantics of Flux's status patch helper: the conditions knc owns
// win over another writer's, the others are kept, lastTransitionTime
// moves only when a condition's state does, observedGeneration is set,
// and a conflict is retried on the latest object. The kinds of the
// references are mapped to resources by package restmap, from the API
// server's discovery documents.
//
// Knative's apis.Condition and metav1.Condition have the same fields but
// two: a Knative condition has a severity and no observedGeneration.
// LiveObject satisfies statuspatch's Getter and Setter (the method sets
// of Flux's conditions.Getter and Setter, which its tests use as the
// reference) by reporting the status's observedGeneration as every
// condition's, and by keeping the severity of a condition of the same
// type that is already there (knc's own conditions are all of error
// severity, which is the empty one).
//
// Drift is found by hashing the live spec exactly as the compiler hashes
// the compiled one (SpecHash): both decode into the spec types of package
// internal/knative/spec and hash with spec.Hash, so a spec edited by hand
// is caught even though its knc.dev/spec-hash annotation still names the
// compiled spec.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or
// anything under github.com/knc-dev/knc/compiler: the runtime starts from
// the routing table and the live objects, never from manifests. Nor may
// it link k8s.io/api, client-go's typed clientsets, informers or
// discovery, controller-runtime or Flux's libraries, which made up over
// a third of the runtime's binary (test/layers checks both). It never prints; it
// logs through the slog.Logger it is given.
package cluster
