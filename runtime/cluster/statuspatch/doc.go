// Package statuspatch writes the status of Kubernetes objects through the
// /status subresource with the dynamic client, with the semantics of
// Flux's status patch helper and condition setters
// (github.com/fluxcd/pkg/runtime/patch and .../conditions):
//
//   - Set keeps a condition's lastTransitionTime while its status, reason
//     and message stay the same, stamps the condition with the object's
//     generation, trims its message and sorts the conditions as Flux does
//     (Stalled, Reconciling and Ready first, then by observedGeneration
//     and type);
//   - Patch sends the change of the conditions as a three-way merge onto
//     the latest object read from the API server, with an optimistic lock
//     on its resourceVersion, retried on a conflict with Flux's backoff:
//     the owned conditions' values win over another writer's, a change of
//     another writer's condition that conflicts is an error, and the
//     conditions nobody changed are kept;
//   - Patch sets status.observedGeneration to metadata.generation and
//     sends the change of the other status fields as a JSON merge patch,
//     with the field manager it is given.
//
// It is written by hand because Flux's helper works through
// controller-runtime's client, whose scheme imports every built-in API
// group of k8s.io/api into the binary of whatever links it; the runtime
// needs none of them. Its tests keep Flux's packages as the reference:
// the same sequences of changes, with another writer in between, run
// through both against a real API server and must leave the same status.
//
// Unlike Flux's helper, Patch sends nothing outside status: a change of
// metadata or spec between before and after is not written.
package statuspatch
