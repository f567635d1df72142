package load

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDecodeFloat(t *testing.T) {
	type withRatio struct {
		APIVersion string   `json:"apiVersion"`
		Kind       string   `json:"kind"`
		Ratio      *float64 `json:"ratio,omitempty"`
	}
	for _, c := range []struct {
		yaml string
		want float64
		err  string
	}{
		{yaml: "ratio: 0.25", want: 0.25},
		{yaml: "ratio: 1", want: 1},
		{yaml: "ratio: 1e-2", want: 0.01},
		{yaml: `ratio: "0.5"`, err: `3:8: ratio: must be a number, not "0.5"`},
		{yaml: `ratio: [1]`, err: "3:8: ratio: must be a number, not a list"},
	} {
		t.Run(c.yaml, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "f.yaml")
			if err := os.WriteFile(p, []byte("apiVersion: v1\nkind: Config\n"+c.yaml+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			docs, diags, err := LoadFiles([]string{p})
			if err != nil || len(diags) > 0 || len(docs) != 1 {
				t.Fatalf("LoadFiles: %v %v %d documents", err, diags, len(docs))
			}
			var got withRatio
			diags = Decode(docs[0], &got)
			if c.err != "" {
				if len(diags) != 1 || !strings.HasSuffix(diags[0].String(), c.err) {
					t.Errorf("Decode diagnostics = %v, want one ending in %q", diags, c.err)
				}
				return
			}
			if len(diags) > 0 {
				t.Fatalf("Decode: %v", diags)
			}
			if diff := cmp.Diff(&c.want, got.Ratio); diff != "" {
				t.Errorf("ratio (-want +got):\n%s", diff)
			}
		})
	}
}
