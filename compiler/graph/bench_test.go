package graph_test

import (
	"io"
	"testing"

	"github.com/knc-dev/knc/internal/benchcorpus"
)

// BenchmarkDraw draws a 10,000-object corpus in every format.
func BenchmarkDraw(b *testing.B) {
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 10000, Namespaces: 10}); err != nil {
		b.Fatal(err)
	}
	g := load(b, dir)
	for name, write := range formats {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if err := write(io.Discard, g); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
