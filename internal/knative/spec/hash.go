package spec

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"

	"github.com/knc-dev/knc/internal/knative"
)

// Hash returns "sha256:" and the hex digest of the JSON encoding of spec,
// one of the spec types of this package: fields in declaration order,
// empty optional fields left out, map keys sorted.
func Hash(spec any) string {
	b, err := json.Marshal(spec)
	if err != nil {
		// Specs are plain data; failing to encode one is a programming error.
		panic("spec: encoding a spec: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Decode decodes the JSON spec of an object of kind into its spec type,
// and returns a pointer to it. A field the type does not have is an error:
// the object was not written from a spec of this version.
func Decode(kind string, data []byte) (any, error) {
	var v any
	switch kind {
	case knative.KindBroker:
		v = new(BrokerSpec)
	case knative.KindTrigger:
		v = new(TriggerSpec)
	case knative.KindChannel:
		v = new(ChannelSpec)
	case knative.KindSubscription:
		v = new(SubscriptionSpec)
	default:
		return nil, fmt.Errorf("unknown kind %q", kind)
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	// Numbers of free-form values (a channel template's spec) keep their
	// digits, as the compiler wrote them.
	d.UseNumber()
	if err := d.Decode(v); err != nil {
		return nil, err
	}
	return v, nil
}
