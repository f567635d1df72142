package load

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestScalar covers the spellings Scalar reads without the decoder and
// those next to them that must still take its path.
func TestScalar(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want any
		err  bool
	}{
		{yaml: "0", want: json.Number("0")},
		{yaml: "42", want: json.Number("42")},
		{yaml: "-7", want: json.Number("-7")},
		{yaml: "9223372036854775807", want: json.Number("9223372036854775807")},
		{yaml: "-9223372036854775808", want: json.Number("-9223372036854775808")},
		{yaml: "9223372036854775808", err: true},
		{yaml: "-0", want: json.Number("0")},
		{yaml: "+5", want: json.Number("5")},
		{yaml: "010", want: json.Number("8")},
		{yaml: "0o17", want: json.Number("15")},
		{yaml: "0x1F", want: json.Number("31")},
		{yaml: "1_000", want: json.Number("1000")},
		{yaml: "!!int 12", want: json.Number("12")},
		{yaml: "!!int 1.5", err: true},
		{yaml: "true", want: true},
		{yaml: "false", want: false},
		{yaml: "True", want: true},
		{yaml: "FALSE", want: false},
		{yaml: "!!bool true", want: true},
		{yaml: "!!bool yes", err: true},
		{yaml: "1.5", want: json.Number("1.5")},
		{yaml: "1.50", want: json.Number("1.50")},
		{yaml: "-0.0", want: json.Number("-0.0")},
		{yaml: "1e-2", want: json.Number("1e-2")},
		{yaml: "1E+2", want: json.Number("1E+2")},
		{yaml: "!!float 1", want: json.Number("1")},
		{yaml: ".5", want: json.Number("0.5")},
		{yaml: "1.", want: json.Number("1")},
		{yaml: "1e400", want: "1e400"},
		{yaml: `!!float "1e400"`, err: true},
		{yaml: "!!float -1e400", err: true},
		{yaml: ".inf", err: true},
		{yaml: ".nan", err: true},
		{yaml: "~", want: nil},
		{yaml: "abc", want: "abc"},
		{yaml: `"12"`, want: "12"},
	} {
		t.Run(c.yaml, func(t *testing.T) {
			var doc yaml.Node
			if err := yaml.Unmarshal([]byte("v: "+c.yaml), &doc); err != nil {
				t.Fatal(err)
			}
			got, err := Scalar(doc.Content[0].Content[1])
			if c.err {
				if err == nil {
					t.Errorf("Scalar = %#v, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatalf("Scalar: %v", err)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("Scalar (-want +got):\n%s", diff)
			}
		})
	}
}

// TestScalarCommonSpellingsAllocateNoDecoder keeps the common scalars off
// the decoder's path, which allocates a decoder for every call: a
// manifest of many small numbers spent most of its load there. Boxing
// the result is the one allocation left.
func TestScalarCommonSpellingsAllocateNoDecoder(t *testing.T) {
	for _, src := range []string{"42", "-7", "true", "1.5", "1e-2"} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte("v: "+src), &doc); err != nil {
			t.Fatal(err)
		}
		n := doc.Content[0].Content[1]
		// AllocsPerRun counts the allocations of the whole process, so a
		// goroutine another test left behind adds to a run's count; it
		// never takes from it, so the fewest of a few runs is Scalar's.
		allocs := math.Inf(1)
		for range 5 {
			allocs = min(allocs, testing.AllocsPerRun(100, func() {
				if _, err := Scalar(n); err != nil {
					t.Fatal(err)
				}
			}))
		}
		if allocs > 1 {
			t.Errorf("Scalar(%s): %v allocations, want at most 1", src, allocs)
		}
	}
}
