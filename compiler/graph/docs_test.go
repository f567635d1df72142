package graph_test

import (
	"bytes"
	"image/png"
	"os"
	"path/filepath"
	"testing"

	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// docImages are the drawings docs/graph.md shows, each a project and the
// part of it drawn.
var docImages = map[string]struct {
	files func(t *testing.T) *topology.Graph
	sel   topology.Selection
}{
	"graph-quickstart.png": {func(t *testing.T) *topology.Graph { return load(t, "../../examples/quickstart") }, topology.Selection{}},
	"graph-focus.png": {func(t *testing.T) *topology.Graph { return project(t, mesh(40)) },
		topology.Selection{Focus: "Service/shop/svc-1", Depth: 2}},
}

// TestDocImages draws the images of docs/graph.md into docs/images with
// KNC_UPDATE=1, and otherwise checks that each is there and has the size
// of the drawing it shows. Byte equality is not asked for: rasterising
// rounds differently on other processors.
func TestDocImages(t *testing.T) {
	for name, img := range docImages {
		t.Run(name, func(t *testing.T) {
			g, err := img.files(t).Select(img.sel)
			if err != nil {
				t.Fatal(err)
			}
			var buf bytes.Buffer
			if err := layout.WritePNG(&buf, g); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("..", "..", "docs", "images", name)
			if update {
				if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			drawn, err := png.DecodeConfig(&buf)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.Open(file)
			if err != nil {
				t.Fatalf("%v; create it with KNC_UPDATE=1", err)
			}
			defer f.Close()
			committed, err := png.DecodeConfig(f)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if committed.Width != drawn.Width || committed.Height != drawn.Height {
				t.Errorf("%s is %dx%d, the drawing %dx%d: regenerate it with KNC_UPDATE=1", file, committed.Width, committed.Height, drawn.Width, drawn.Height)
			}
		})
	}
}
