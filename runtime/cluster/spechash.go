package cluster

import (
	"encoding/json"
	"fmt"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/knative/spec"
)

// SpecHash hashes a live object's spec as the compiler hashed the spec it
// wrote: decoded into the same types (package spec) and encoded by
// encoding/json. A field those types do not have is an error, so that a
// spec written by another version is not taken for the compiled one. A
// test outside the runtime (which may import the compiler) checks that
// both hashes agree on every object of the examples, after a round trip
// through the API server.
func SpecHash(kind string, live map[string]any) (string, error) {
	v, err := decodeSpec(kind, live)
	if err != nil {
		return "", err
	}
	return spec.Hash(v), nil
}

// decodeSpec decodes a live spec into the spec type of kind.
func decodeSpec(kind string, live map[string]any) (any, error) {
	data, err := json.Marshal(live)
	if err != nil {
		return nil, fmt.Errorf("spec hash: %w", err)
	}
	v, err := spec.Decode(kind, data)
	if err != nil {
		return nil, fmt.Errorf("spec hash: %w", err)
	}
	return v, nil
}

// specHashes returns the hashes the live spec of kind may match. knc's
// Broker CRD defaults spec.config to {}, as the control-plane contract
// wants it set, after knc hashed the spec without it (and Brokers written
// by older versions of knc carry it in the manifest); such a Broker matches
// either hash.
func specHashes(kind string, live map[string]any) ([]string, error) {
	h, err := SpecHash(kind, live)
	if err != nil {
		return nil, err
	}
	hashes := []string{h}
	if kind == knative.KindBroker {
		if cfg, ok := live["config"].(map[string]any); ok && len(cfg) == 0 {
			without := make(map[string]any, len(live))
			for k, v := range live {
				if k != "config" {
					without[k] = v
				}
			}
			h, err := SpecHash(kind, without)
			if err != nil {
				return nil, err
			}
			hashes = append(hashes, h)
		}
	}
	return hashes, nil
}
