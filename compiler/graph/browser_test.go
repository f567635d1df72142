package graph_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/knc-dev/knc/internal/browsertest"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// browserGeometry is run in the page: the box of each node's outline and
// of each text, as the browser lays them out in the SVG's user space.
const browserGeometry = `(() => {
	const box = (el) => { const b = el.getBBox(); return {x0: b.x, y0: b.y, x1: b.x + b.width, y1: b.y + b.height}; };
	const union = (bs) => bs.reduce((a, b) => ({x0: Math.min(a.x0, b.x0), y0: Math.min(a.y0, b.y0), x1: Math.max(a.x1, b.x1), y1: Math.max(a.y1, b.y1)}));
	const texts = (g) => [...g.querySelectorAll('text')].map((t) => ({text: t.textContent, box: box(t)}));
	const vb = document.documentElement.viewBox.baseVal;
	const graph = document.querySelector('g.graph');
	const m = graph.transform.baseVal.consolidate().matrix;
	return {
		viewBox: {x0: vb.x, y0: vb.y, x1: vb.x + vb.width, y1: vb.y + vb.height},
		transform: [m.a, m.d, m.e, m.f],
		nodes: [...document.querySelectorAll('g.node')].map((g) => ({
			id: g.id,
			box: union([...g.querySelectorAll('polygon, path, ellipse, polyline')].map(box)),
			texts: texts(g),
		})),
		edges: [...document.querySelectorAll('g.edge')].map((g) => ({title: g.querySelector('title').textContent, labels: texts(g)})),
		clusters: [...document.querySelectorAll('g.cluster')].map((g) => texts(g)).flat(),
	};
})()`

type pageRect struct{ X0, Y0, X1, Y1 float64 }

type pageText struct {
	Text string
	Box  pageRect
}

type pageGeometry struct {
	ViewBox   pageRect
	Transform [4]float64
	Nodes     []struct {
		ID    string
		Box   pageRect
		Texts []pageText
	}
	Edges []struct {
		Title  string
		Labels []pageText
	}
	Clusters []pageText
}

// drawing maps the page's boxes into the image's space, as parseDrawing
// does, and holds the texts of each node apart to check they fit.
func (p *pageGeometry) drawing() (*drawing, map[string][]drawnText) {
	place := func(r pageRect) rect {
		a, d, e, f := p.Transform[0], p.Transform[1], p.Transform[2], p.Transform[3]
		return rect{a*r.X0 + e, d*r.Y0 + f, a*r.X1 + e, d*r.Y1 + f}
	}
	text := func(t pageText) drawnText { return drawnText{t.Text, place(t.Box)} }
	d := &drawing{viewBox: rect{p.ViewBox.X0, p.ViewBox.Y0, p.ViewBox.X1, p.ViewBox.Y1}}
	inside := map[string][]drawnText{}
	for _, n := range p.Nodes {
		d.nodes = append(d.nodes, drawnNode{id: n.ID, box: place(n.Box)})
		for _, t := range n.Texts {
			inside[n.ID] = append(inside[n.ID], text(t))
		}
	}
	for _, e := range p.Edges {
		de := drawnEdge{title: e.Title}
		for _, l := range e.Labels {
			de.labels = append(de.labels, text(l))
		}
		d.edges = append(d.edges, de)
	}
	for _, c := range p.Clusters {
		d.clusterTitles = append(d.clusterTitles, text(c))
	}
	return d, inside
}

// TestBrowserGeometry loads the SVG of each example and of generated
// meshes into headless Chromium, reads the boxes the browser gives nodes
// and texts, with its own fonts, and checks that no two nodes, labels or
// titles overlap and that each node's text stays inside its box. With
// KNC_UPDATE=1 it saves a screenshot of the quickstart in docs/images.
func TestBrowserGeometry(t *testing.T) {
	if testing.Short() {
		t.Skip("the browser test starts Chromium; it runs without -short")
	}
	browser := browsertest.Chromium(t)
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(browser),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.UserDataDir(t.TempDir()),
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	ctx, cancelAlloc := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelAlloc()
	ctx, cancelBrowser := chromedp.NewContext(ctx)
	defer cancelBrowser()

	drawings := map[string]func(t *testing.T) *topology.Graph{
		"mesh-40":  func(t *testing.T) *topology.Graph { return project(t, mesh(40)) },
		"mesh-200": func(t *testing.T) *topology.Graph { return project(t, mesh(200)) },
	}
	for name, dir := range goldenProjects {
		drawings[name] = func(t *testing.T) *topology.Graph { return load(t, dir) }
	}
	dir := t.TempDir()
	for name, draw := range drawings {
		t.Run(name, func(t *testing.T) {
			var svg bytes.Buffer
			if err := layout.WriteSVG(&svg, draw(t)); err != nil {
				t.Fatal(err)
			}
			file := filepath.Join(dir, name+".svg")
			if err := os.WriteFile(file, svg.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := chromedp.Do(ctx, chromedp.Navigate("file://"+file)); err != nil {
				t.Fatalf("Chromium: %v", err)
			}
			page, err := chromedp.Run(ctx, chromedp.Evaluate[pageGeometry](browserGeometry))
			if err != nil {
				t.Fatalf("Chromium: %v", err)
			}
			want := parseDrawing(t, svg.Bytes())
			if len(page.Nodes) != len(want.nodes) || len(page.Edges) != len(want.edges) {
				t.Fatalf("the page has %d nodes and %d edges, the SVG %d and %d", len(page.Nodes), len(page.Edges), len(want.nodes), len(want.edges))
			}
			d, inside := page.drawing()
			for _, p := range overlaps(d) {
				t.Error(p)
			}
			for _, n := range d.nodes {
				for _, text := range inside[n.id] {
					if text.box.union(n.box) != n.box && !within(text.box, n.box, 1) {
						t.Errorf("text %q %v sticks out of node %s %v", text.text, text.box, n.id, n.box)
					}
				}
			}
			if update && name == "quickstart" {
				shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join("..", "..", "docs", "images", "graph-browser-quickstart.png"), shot, 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
}

// within reports whether r lies inside o, give or take slack.
func within(r, o rect, slack float64) bool {
	return r.x0 >= o.x0-slack && r.y0 >= o.y0-slack && r.x1 <= o.x1+slack && r.y1 <= o.y1+slack
}
