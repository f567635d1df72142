package compiler

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/routes"
)

// FuzzLoad writes its input as a manifest file, and as knc.yaml when the
// second input is not empty, and loads and checks the project as every
// command does: it must never panic, and every diagnostic must point at a
// file and a line. A project that loads without diagnostics must also
// compile into a routing table. The seed corpus is in
// testdata/fuzz/FuzzLoad.
func FuzzLoad(f *testing.F) {
	for _, name := range []string{"broker.yaml", "triggers.yaml", "channel.yaml", "services.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "examples", "quickstart", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte(nil))
	}
	f.Fuzz(func(t *testing.T, manifest, config []byte) {
		dir := t.TempDir()
		// The search for knc.yaml stops at the top of a git work tree.
		if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		if len(config) > 0 {
			if err := os.WriteFile(filepath.Join(dir, "knc.yaml"), config, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		res, err := Load(Options{Paths: []string{dir}, Dir: dir})
		if err != nil {
			t.Fatalf("Load failed on input, not on I/O: %v", err)
		}
		for _, d := range res.Diagnostics {
			// A path that holds no Knative object is a warning about the
			// path as a whole.
			if d.Severity == diag.Warning && d.Pos.File == "." && d.Pos.Line == 0 {
				continue
			}
			if d.Pos.File == "" || d.Pos.Line < 1 {
				t.Errorf("diagnostic without a file and line: %s", d)
			}
		}
		if res.Valid() {
			if _, diags := routes.CompileWith(res.Set, res.Config, routes.Options{}); len(diags) > 0 {
				for _, d := range diags {
					if d.Pos.File == "" {
						t.Errorf("compile diagnostic without a file: %s", d)
					}
				}
			}
		}
	})
}
