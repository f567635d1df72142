package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// roundTrip encodes v and reads it back with a YAML library.
func roundTrip(t *testing.T, v any) any {
	t.Helper()
	var buf bytes.Buffer
	if err := encodeYAML(&buf, v); err != nil {
		t.Fatal(err)
	}
	var got any
	if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("invalid YAML: %v\n%s", err, buf.String())
	}
	return got
}

// numbersAsJSON turns YAML's decoded numbers into json.Number strings, as the
// encoder's input carries them.
func numbersAsJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, x := range v {
			out[k] = numbersAsJSON(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = numbersAsJSON(x)
		}
		return out
	case int:
		return json.Number(json.Number(itoa(v)))
	}
	return v
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

var trickyStrings = []string{
	"", " ", "a", "true", "True", "yes", "no", "on", "off", "y", "n", "null", "~", "Null",
	"1", "-1", "1.5", "1e3", "0x1F", "0o17", "012", "1_000", "12:30", "2001-12-14", ".inf", "-.inf", ".nan",
	"-", "--", "---", "...", "-a", ".a", "a b", "a  b", " a", "a ", "a: b", "a:b", "a:", ":a", "a #b", "a#b", "#a",
	"@a", "`a", "&a", "*a", "!a", "|", ">", "%a", "'a'", `"a"`, "[a]", "{a}", "a,b", "?", "? a",
	"line1\nline2", "line1\nline2\n", "line1\n\nline2\n", "trailing\n\n", " lead\nx", "x \ny", "tab\there",
	"uni ✓", "ctl\x01", "\u2028", "crlf\r\n", "sha256:abc", "http://example.com/a?b=c#d", "eventing.knative.dev/broker.class",
	"{\n  \"a\": 1\n}\n",
}

func TestEncodeYAMLRoundTrips(t *testing.T) {
	for _, s := range trickyStrings {
		v := map[string]any{"key": s, s + "k": "v", "list": []any{s, map[string]any{"x": s, "y": []any{s}}}}
		if s == "" {
			delete(v, "k")
		}
		got := roundTrip(t, v)
		if diff := cmp.Diff(numbersAsJSON(v), numbersAsJSON(got)); diff != "" {
			var buf bytes.Buffer
			_ = encodeYAML(&buf, v)
			t.Errorf("%q does not round-trip (-want +got):\n%s\n%s", s, diff, buf.String())
		}
	}
}

func TestEncodeYAMLLayout(t *testing.T) {
	v := map[string]any{
		"spec":       map[string]any{"b": []any{}, "a": map[string]any{}, "list": []any{map[string]any{"name": "x", "args": []any{"run", "--x"}}, []any{"n"}}},
		"kind":       "ConfigMap",
		"metadata":   map[string]any{"namespace": "ns", "name": "n", "annotations": map[string]any{"k": "v"}},
		"apiVersion": "v1",
		"data":       map[string]any{"table.json": "{\n  \"a\": 1\n}\n", "n": json.Number("3")},
	}
	want := `apiVersion: v1
kind: ConfigMap
metadata:
  name: "n"
  namespace: ns
  annotations:
    k: v
data:
  "n": 3
  table.json: |
    {
      "a": 1
    }
spec:
  a: {}
  b: []
  list:
  - name: x
    args:
    - run
    - --x
  -
    - "n"
`
	var buf bytes.Buffer
	if err := encodeYAML(&buf, v); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("layout (-want +got):\n%s", diff)
	}
}

// TestSortedKeysLargeMappings checks that mappings with more keys than the
// insertion sort takes come out in the same order: well-known keys first,
// in their order, then the rest by byte order.
func TestSortedKeysLargeMappings(t *testing.T) {
	for _, n := range []int{insertionSortKeys, insertionSortKeys + 1, 1000} {
		m := map[string]any{}
		for i := range n {
			m[fmt.Sprintf("k%04d", n-i)] = i
		}
		for k := range keyPriority {
			m[k] = k
		}
		want := []string{"apiVersion", "kind", "metadata", "name", "namespace", "labels", "annotations"}
		for i := 1; i <= n; i++ {
			want = append(want, fmt.Sprintf("k%04d", i))
		}
		if diff := cmp.Diff(want, sortedKeys(m, nil)); diff != "" {
			t.Errorf("%d keys besides the well-known ones: order (-want +got):\n%s", n, diff)
		}
	}
}

// BenchmarkEncodeLargeMapping writes one mapping of many keys, as a large
// ConfigMap's data; ns/key should stay flat as keys grow.
func BenchmarkEncodeLargeMapping(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			data := make(map[string]any, n)
			for i := range n {
				data[fmt.Sprintf("k%d", i)] = fmt.Sprintf("v%d", i)
			}
			obj := map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": data}
			var buf bytes.Buffer
			for b.Loop() {
				buf.Reset()
				if err := encodeYAML(&buf, obj); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/key")
		})
	}
}
