package golden_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/plugins"
)

// TestValidateAcceptsBuildOutput: knc validate accepts whatever knc build
// writes, both the files as written (a copy of the output committed into
// the repository) and what kustomize build makes of them (what Flux and
// Argo CD apply, or a rendered copy kept for review), for every golden
// project that builds and every example.
func TestValidateAcceptsBuildOutput(t *testing.T) {
	projects := map[string]string{}
	cases, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range cases {
		projects["golden/"+strings.TrimSuffix(filepath.Base(file), ".txtar")] = file
	}
	examples, err := filepath.Glob("../examples/*/knc.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, cfg := range examples {
		projects["examples/"+filepath.Base(filepath.Dir(cfg))] = filepath.Dir(cfg)
	}
	if len(examples) == 0 || len(cases) == 0 {
		t.Fatal("no projects to build")
	}
	for name, src := range projects {
		t.Run(name, func(t *testing.T) {
			in := src
			if strings.HasSuffix(src, ".txtar") {
				in = extractInput(t, src)
			}
			res, err := compiler.Load(compiler.Options{Dir: in})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid() {
				t.Skipf("%s is a case of invalid input", src)
			}
			out, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends, Root: in})
			if err != nil {
				t.Fatal(err)
			}
			if len(diags) > 0 {
				t.Skipf("%s is a case of a build that fails: %v", src, diags)
			}
			dir := t.TempDir()
			built := filepath.Join(dir, "built")
			if err := out.Write(built); err != nil {
				t.Fatal(err)
			}
			cfg := res.Config.File

			// The output as written, without the marker that makes knc
			// skip it, as if copied into the repository.
			raw := filepath.Join(dir, "raw")
			if err := os.CopyFS(raw, os.DirFS(built)); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(filepath.Join(raw, load.OutputMarker)); err != nil {
				t.Fatal(err)
			}
			checkValid(t, "the output of knc build", raw, cfg)

			m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), built)
			if err != nil {
				t.Fatalf("kustomize build: %v", err)
			}
			rendered, err := m.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
			kustomized := filepath.Join(dir, "kustomized")
			if err := os.MkdirAll(kustomized, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(kustomized, "all.yaml"), rendered, 0o644); err != nil {
				t.Fatal(err)
			}
			checkValid(t, "kustomize build of the output", kustomized, cfg)
		})
	}
}

func checkValid(t *testing.T, what, dir, cfg string) {
	t.Helper()
	res, err := compiler.Load(compiler.Options{Dir: dir, ConfigFile: cfg})
	if err != nil {
		t.Fatalf("loading %s: %v", what, err)
	}
	if len(res.Diagnostics) > 0 {
		t.Errorf("knc validate reports on %s:\n%v", what, res.Diagnostics.Relative(dir))
	}
}

// extractInput writes the input files of a golden case to a directory.
func extractInput(t *testing.T, file string) string {
	t.Helper()
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, inputDir) {
			continue
		}
		p := filepath.Join(in, filepath.FromSlash(strings.TrimPrefix(f.Name, inputDir)))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.Data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}
