package cluster

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func parseSpec(t testing.TB, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestSpecJSON checks the live spec is written as encoding/json writes the
// compiler's types: declaration order, omitempty, pointers to empty
// structs kept, required fields written when absent, empty strings kept
// where a pointer tells them from absent ones. The agreement with the
// compiler itself is checked by test/cluster.
func TestSpecJSON(t *testing.T) {
	tests := []struct {
		name, kind, live, want string
	}{
		{"trigger, keys out of order", "Trigger",
			`{"subscriber":{"uri":"http://a/"},"broker":"default"}`,
			`{"broker":"default","subscriber":{"uri":"http://a/"}}`},
		{"trigger without subscriber writes an empty one", "Trigger",
			`{"broker":"b"}`,
			`{"broker":"b","subscriber":{}}`},
		{"empty filter kept, empty filters dropped", "Trigger",
			`{"broker":"b","filter":{},"filters":[],"subscriber":{"uri":"u"}}`,
			`{"broker":"b","filter":{},"subscriber":{"uri":"u"}}`},
		{"filter attributes sorted, empty attributes dropped", "Trigger",
			`{"broker":"b","filter":{"attributes":{"type":"t","source":""}},"subscriber":{"uri":"u"}}`,
			`{"broker":"b","filter":{"attributes":{"source":"","type":"t"}},"subscriber":{"uri":"u"}}`},
		{"nested filters and an empty cesql", "Trigger",
			`{"broker":"b","filters":[{"not":{"cesql":""}},{"any":[{"prefix":{"type":"a"}},{"exact":{"id":"x"}}]}],"subscriber":{"uri":"u"}}`,
			`{"broker":"b","filters":[{"not":{"cesql":""}},{"any":[{"prefix":{"type":"a"}},{"exact":{"id":"x"}}]}],"subscriber":{"uri":"u"}}`},
		{"delivery with retry 0 and a ref", "Trigger",
			`{"broker":"b","subscriber":{"ref":{"name":"s","kind":"Service","apiVersion":"v1","namespace":"n"},"uri":"/x"},"delivery":{"retry":0,"backoffDelay":"PT1S","deadLetterSink":{"uri":"http://d/"}}}`,
			`{"broker":"b","subscriber":{"ref":{"apiVersion":"v1","kind":"Service","name":"s","namespace":"n"},"uri":"/x"},"delivery":{"deadLetterSink":{"uri":"http://d/"},"retry":0,"backoffDelay":"PT1S"}}`},
		{"HTML characters escaped as encoding/json does", "Trigger",
			`{"broker":"b","filters":[{"cesql":"a < 1 AND b > 2 & c"}],"subscriber":{"uri":"u"}}`,
			`{"broker":"b","filters":[{"cesql":"a \u003c 1 AND b \u003e 2 \u0026 c"}],"subscriber":{"uri":"u"}}`},
		{"broker with an empty config, whose reference fields are all optional", "Broker",
			`{"config":{}}`,
			`{"config":{}}`},
		{"trigger with brokerRef, an empty uri kept and a ref address", "Trigger",
			`{"brokerRef":{"name":"b","namespace":"n"},"subscriber":{"uri":"","ref":{"kind":"Service","apiVersion":"v1","name":"s","address":"a"}}}`,
			`{"brokerRef":{"name":"b","namespace":"n"},"subscriber":{"ref":{"apiVersion":"v1","kind":"Service","name":"s","address":"a"},"uri":""}}`},
		{"empty broker spec", "Broker", `{}`, `{}`},
		{"channel template spec, free-form", "Channel",
			`{"channelTemplate":{"kind":"K","apiVersion":"a/v1","spec":{"z":1,"a":[true,2.5]}}}`,
			`{"channelTemplate":{"apiVersion":"a/v1","kind":"K","spec":{"a":[true,2.5],"z":1}}}`},
		{"channel subscribers, zero generation dropped", "Channel",
			`{"subscribers":[{"generation":0,"subscriberUri":"http://s/"}]}`,
			`{"subscribers":[{"subscriberUri":"http://s/"}]}`},
		{"subscription", "Subscription",
			`{"reply":{"uri":"http://r/"},"channel":{"apiVersion":"messaging.knative.dev/v1","kind":"Channel","name":"c"}}`,
			`{"channel":{"apiVersion":"messaging.knative.dev/v1","kind":"Channel","name":"c"},"reply":{"uri":"http://r/"}}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := decodeSpec(tt.kind, parseSpec(t, tt.live))
			if err != nil {
				t.Fatal(err)
			}
			got, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("JSON (-want +got):\n%s", diff)
			}
			hash, err := SpecHash(tt.kind, parseSpec(t, tt.live))
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256([]byte(tt.want))
			if want := "sha256:" + hex.EncodeToString(sum[:]); hash != want {
				t.Errorf("SpecHash = %s, want %s", hash, want)
			}
		})
	}
}

func TestSpecHashRefusesUnknownFields(t *testing.T) {
	for _, live := range []string{
		`{"broker":"b","subscriber":{"uri":"u"},"extra":1}`,
		`{"broker":"b","subscriber":{"uri":"u","ref":{"apiVersion":"v1","kind":"S","name":"s","uid":"x"}}}`,
		`{"broker":1,"subscriber":{"uri":"u"}}`,
		`{"broker":"b","subscriber":{"uri":"u"},"delivery":{"retry":1.5}}`,
	} {
		if _, err := SpecHash("Trigger", parseSpec(t, live)); err == nil {
			t.Errorf("SpecHash(%s) succeeded, want an error", live)
		}
	}
	if _, err := SpecHash("Pod", map[string]any{}); err == nil || !strings.Contains(err.Error(), "unknown kind") {
		t.Errorf("SpecHash of a Pod: %v, want an unknown kind error", err)
	}
}

// TestSpecHashesOfBrokerWithEmptyConfig: knc writes spec.config: {} after
// hashing, so such a Broker matches the hash with and without it.
func TestSpecHashesOfBrokerWithEmptyConfig(t *testing.T) {
	with, err := specHashes("Broker", parseSpec(t, `{"config":{},"delivery":{"retry":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	without, err := SpecHash("Broker", parseSpec(t, `{"delivery":{"retry":1}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(with) != 2 || with[1] != without {
		t.Errorf("specHashes = %v, want a second hash %s", with, without)
	}
	named, err := specHashes("Broker", parseSpec(t, `{"config":{"apiVersion":"v1","kind":"ConfigMap","name":"c"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(named) != 1 {
		t.Errorf("a Broker with a real config has %d candidate hashes, want 1", len(named))
	}
}
