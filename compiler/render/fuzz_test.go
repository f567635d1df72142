package render_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/plugins"
)

// FuzzBuild asserts that validate implies build: a manifest that loads and
// checks without errors, as knc validate reads it, renders and writes an
// output directory without an error or a diagnostic. Its seeds, in
// testdata/fuzz/FuzzBuild, hold the YAML features validate and build once
// read differently: merge keys, aliases, tags and numbers JSON cannot hold,
// and names that lead out of the output directory.
func FuzzBuild(f *testing.F) {
	for _, name := range []string{"broker.yaml", "triggers.yaml", "services.yaml"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "examples", "quickstart", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, manifest []byte) {
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "manifest.yaml"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Load(compiler.Options{Paths: []string{dir}, Dir: dir})
		if err != nil {
			t.Fatalf("Load failed on input, not on I/O: %v", err)
		}
		if !res.Valid() {
			return
		}
		out, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends})
		if err != nil {
			t.Fatalf("validate passed, build failed: %v", err)
		}
		if len(diags) > 0 {
			// Render's diagnostics are those of compiling routes, which
			// validate does not run; they must still name a file.
			for _, d := range diags {
				if d.Pos.File == "" {
					t.Errorf("build diagnostic without a file: %s", d)
				}
			}
			return
		}
		if err := out.Write(filepath.Join(dir, "out")); err != nil {
			t.Fatalf("validate passed, writing the build failed: %v", err)
		}
	})
}
