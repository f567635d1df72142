// Package crd generates the CustomResourceDefinitions of Broker, Trigger,
// Channel and Subscription from knc's CUE schema, so that the API server
// refuses what knc validate refuses wherever OpenAPI and CEL can express it.
//
// The schemas come from cuelang.org/go/encoding/openapi. What that encoder
// cannot translate (matchN, != and !~, struct.MinFields, comprehensions,
// constrained map keys, recursion) is taken out of the syntax tree first and
// put back as structural-schema keywords (anyOf, oneOf, not, minProperties,
// minItems) or as CEL rules; a construct it does not know is an error, never
// a silent omission. The result is a structural schema: every node typed,
// metadata left to the API server, open objects marked
// x-kubernetes-preserve-unknown-fields. Unknown fields are pruned by the API
// server, not refused.
//
// The immutable fields of the control-plane contract carry CEL transition
// rules (self == oldSelf); the Broker class annotation, which CRD rules
// cannot read, is guarded by a ValidatingAdmissionPolicy.
//
// This package must not import the runtime or client-go.
package crd
