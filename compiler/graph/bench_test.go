package graph_test

import (
	"io"
	"testing"

	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// textFormats are the formats knc writes without a layout.
var textFormats = []string{"mmd", "dot"}

// BenchmarkDraw draws a 10,000-object corpus as Mermaid and DOT, which
// need no layout.
func BenchmarkDraw(b *testing.B) {
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 10000, Namespaces: 10}); err != nil {
		b.Fatal(err)
	}
	g := load(b, dir)
	for _, name := range textFormats {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := formats[name](io.Discard, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLayout lays out 1,000 Triggers as SVG with Graphviz: the bench
// corpus (fifty Brokers of twenty Triggers in ten namespaces) and a mesh of
// three Brokers and two Channels, whose crossings are the harder problem.
// The target is under 2 s each; the WebAssembly module is compiled once
// per process, before the first iteration.
func BenchmarkLayout(b *testing.B) {
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 1250, Namespaces: 10}); err != nil {
		b.Fatal(err)
	}
	for name, g := range map[string]func() *topology.Graph{
		"corpus-1000": func() *topology.Graph { return load(b, dir) },
		"mesh-1000":   func() *topology.Graph { return project(b, mesh(1000)) },
	} {
		b.Run(name, func(b *testing.B) {
			g := g()
			for b.Loop() {
				if err := layout.WriteSVG(io.Discard, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
