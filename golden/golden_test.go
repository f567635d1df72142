package golden_test

import (
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/plugins"
)

const (
	inputDir    = "input/"
	outputDir   = "output/"
	diagnostics = "diagnostics"
	// crdDir is compared only in the cases that list it: the CRDs are the
	// same whatever the input, and one case (crds.txtar) covers them.
	crdDir = outputDir + render.CRDDir + "/"
)

var update = os.Getenv("KNC_UPDATE") != ""

func TestGolden(t *testing.T) {
	cases, err := filepath.Glob("testdata/*.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) == 0 {
		t.Fatal("no golden cases")
	}
	for _, file := range cases {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			runCase(t, file)
		})
	}
}

func runCase(t *testing.T, file string) {
	ar, err := txtar.ParseFile(file)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in")
	withCRDs := false
	var inputs int
	for _, f := range ar.Files {
		switch {
		case strings.HasPrefix(f.Name, inputDir):
			p := filepath.Join(in, filepath.FromSlash(strings.TrimPrefix(f.Name, inputDir)))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, f.Data, 0o644); err != nil {
				t.Fatal(err)
			}
			inputs++
		case strings.HasPrefix(f.Name, crdDir):
			withCRDs = true
		}
	}
	if inputs == 0 {
		t.Fatalf("%s has no %s files", file, inputDir)
	}

	got := build(t, in)
	if !withCRDs {
		for name := range got {
			if strings.HasPrefix(name, crdDir) {
				delete(got, name)
			}
		}
	}
	want := map[string]string{}
	for _, f := range ar.Files {
		if !strings.HasPrefix(f.Name, inputDir) {
			want[f.Name] = string(f.Data)
		}
	}

	if update {
		var files []txtar.File
		for _, f := range ar.Files {
			if strings.HasPrefix(f.Name, inputDir) {
				files = append(files, f)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(got)) {
			files = append(files, txtar.File{Name: name, Data: []byte(got[name])})
		}
		ar.Files = files
		if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("%s is stale; review the change and regenerate it with KNC_UPDATE=1 (-want +got):\n%s", file, diff)
	}

	if _, failed := got[diagnostics]; !failed {
		// What Flux and Argo CD do with the output: kustomize build.
		out := filepath.Join(dir, "out")
		res, err := compiler.Load(compiler.Options{Dir: in})
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends, Root: in})
		if err != nil {
			t.Fatal(err)
		}
		if err := o.Write(out); err != nil {
			t.Fatal(err)
		}
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		if _, err := k.Run(filesys.MakeFsOnDisk(), out); err != nil {
			t.Errorf("kustomize build of the output: %v", err)
		}
	}
}

// build returns the files knc build writes for the project in dir, named
// output/PATH, or its diagnostics as a file named diagnostics.
func build(t *testing.T, dir string) map[string]string {
	t.Helper()
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	report := func(d interface{ Error() string }) map[string]string {
		return map[string]string{diagnostics: d.Error() + "\n"}
	}
	if !res.Valid() {
		return report(res.Diagnostics)
	}
	out, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends, Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(diags) > 0 {
		return report(diags.Relative(dir).Sorted())
	}
	files := map[string]string{}
	for _, f := range out.Files {
		files[outputDir+f.Path] = string(f.Data)
	}
	var stream bytes.Buffer
	if err := out.Stream(&stream); err != nil {
		t.Fatal(err)
	}
	if stream.Len() == 0 {
		t.Error("empty stream")
	}
	return files
}
