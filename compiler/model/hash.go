package model

import "github.com/knc-dev/knc/internal/knative/spec"

// SpecHashAnnotation carries the hash of an object's compiled spec, so the
// runtime can tell whether a live object is the one it was compiled from.
const SpecHashAnnotation = "knc.dev/spec-hash"

// SpecHash returns "sha256:" and the hex digest of the spec's JSON encoding
// (spec.Hash); the runtime hashes live specs the same way.
func SpecHash(v any) string { return spec.Hash(v) }

// Spec returns the object's spec, for hashing.
func Spec(o Object) any {
	switch o := o.(type) {
	case *Broker:
		return &o.Spec
	case *Trigger:
		return &o.Spec
	case *Channel:
		return &o.Spec
	case *Subscription:
		return &o.Spec
	case *Sequence:
		return &o.Spec
	case *Parallel:
		return &o.Spec
	}
	return nil
}
