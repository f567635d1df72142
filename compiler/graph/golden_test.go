package graph_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

var update = os.Getenv("KNC_UPDATE") != ""

// goldenProjects are drawn into testdata/golden/NAME.{mmd,dot,svg}.
var goldenProjects = map[string]string{
	"quickstart":      "../../examples/quickstart",
	"multi-namespace": "../../examples/multi-namespace",
	"plugin":          "../../examples/plugin",
	"edge-cases":      "testdata/projects/edge-cases",
	"sources":         "testdata/projects/sources",
	"sources-example": "../../examples/sources",
}

var formats = map[string]func(io.Writer, *topology.Graph) error{
	"mmd": topology.WriteMermaid,
	"dot": topology.WriteDOT,
	"svg": layout.WriteSVG,
}

// TestGolden compares the drawing of each project with its golden file.
// Regenerate them with KNC_UPDATE=1 go test ./compiler/graph/, and review
// the change.
func TestGolden(t *testing.T) {
	want := map[string]bool{}
	for name, dir := range goldenProjects {
		g := load(t, dir)
		for ext, write := range formats {
			file := filepath.Join("testdata", "golden", name+"."+ext)
			want[file] = true
			t.Run(name+"."+ext, func(t *testing.T) {
				var buf bytes.Buffer
				if err := write(&buf, g); err != nil {
					t.Fatal(err)
				}
				// Twice, to show the output does not depend on map order.
				var again bytes.Buffer
				if err := write(&again, load(t, dir)); err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(buf.Bytes(), again.Bytes()) {
					t.Fatalf("two drawings of %s differ", dir)
				}
				if update {
					if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
					return
				}
				golden, err := os.ReadFile(file)
				if err != nil {
					t.Fatalf("%v; create it with KNC_UPDATE=1", err)
				}
				if diff := cmp.Diff(string(golden), buf.String()); diff != "" {
					t.Errorf("%s is stale; review the change and regenerate it with KNC_UPDATE=1 (-want +got):\n%s", file, diff)
				}
			})
		}
	}
	// A golden file nothing produces is left over from a removed project.
	files, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if !want[f] {
			if update {
				os.Remove(f)
				continue
			}
			t.Errorf("%s is not produced by any project; delete it or regenerate with KNC_UPDATE=1", f)
		}
	}
}

// load compiles a project and draws it; the project must be valid.
func load(t testing.TB, dir string) *topology.Graph {
	t.Helper()
	res, err := compiler.Load(compiler.Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("%s does not validate:\n%v", dir, res.Diagnostics)
	}
	table, diags := routes.Compile(res.Set, res.Config)
	if len(diags) > 0 {
		t.Fatalf("%s does not compile:\n%v", dir, diags)
	}
	return graph.Build(res.Set, table)
}
