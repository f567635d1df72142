package compiler

import (
	"fmt"
	"testing"

	"github.com/knc-dev/knc/internal/benchcorpus"
)

// BenchmarkLoad validates generated corpora: mixed kinds, twenty Triggers
// per Broker. Compare ns/op across sizes to see that cost grows linearly.
// The side-by-side comparison with `cue vet` is hack/bench-validate.sh.
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			if n > 10_000 && testing.Short() {
				b.Skip("the 100,000-object corpus is skipped in -short mode")
			}
			dir := b.TempDir()
			if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: n}); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := Load(Options{Paths: []string{dir}, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Valid() {
					b.Fatalf("corpus is invalid: %v", res.Diagnostics[:min(3, len(res.Diagnostics))])
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/object")
		})
	}
}

// BenchmarkLoadOverlays validates 10,000 objects split over 20 parts, once
// as plain files (one deploy unit) and once as 20 kustomize overlays of 20
// bases (20 units, each rendered by kustomize first). The overlays are
// meant to stay within twice the time of the plain files.
func BenchmarkLoadOverlays(b *testing.B) {
	const objects, parts = 10_000, 20
	for _, layout := range []string{"plain", "overlays"} {
		b.Run("layout="+layout, func(b *testing.B) {
			dir := b.TempDir()
			if err := benchcorpus.WriteSplit(dir, benchcorpus.Shape{Objects: objects}, parts, layout == "overlays"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				res, err := Load(Options{Paths: []string{dir}, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Valid() {
					b.Fatalf("corpus is invalid: %v", res.Diagnostics[:min(3, len(res.Diagnostics))])
				}
				want := 1
				if layout == "overlays" {
					want = parts
				}
				if len(res.Units) != want || len(res.Set.Triggers) != objects/25*20 {
					b.Fatalf("%d units and %d Triggers, want %d units and %d Triggers", len(res.Units), len(res.Set.Triggers), want, objects/25*20)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
		})
	}
}
