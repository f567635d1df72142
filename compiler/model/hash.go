package model

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// SpecHashAnnotation carries the hash of an object's compiled spec, so the
// runtime can tell whether a live object is the one it was compiled from.
const SpecHashAnnotation = "knc.dev/spec-hash"

// SpecHash returns "sha256:" and the hex digest of the spec's JSON encoding.
// encoding/json sorts map keys, so equal specs hash equally.
func SpecHash(spec any) string {
	b, err := json.Marshal(spec)
	if err != nil {
		// Specs are plain data; failing to encode one is a programming error.
		panic("model: encoding spec: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

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
	}
	return nil
}
