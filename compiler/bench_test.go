package compiler

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/procstat"
	"github.com/knc-dev/knc/internal/version"
	"github.com/knc-dev/knc/plugins"
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

// BenchmarkBuild runs the whole pipeline over 10,000 objects, as knc build
// does: every stage up to the render, with knc's back ends. Its cost above
// BenchmarkLoad's is that of the routes and render stages.
func BenchmarkBuild(b *testing.B) {
	const objects = 10_000
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: objects}); err != nil {
		b.Fatal(err)
	}
	opts := Options{Paths: []string{dir}, Dir: dir, Select: OneUnit, Command: "build", Routes: &RouteOptions{},
		Render: &RenderOptions{Version: version.Get(), Backends: plugins.Backends}}
	b.ReportAllocs()
	b.ResetTimer()
	cpu := procstat.CPUTime()
	for b.Loop() {
		res, err := Build(context.Background(), opts)
		if err != nil {
			b.Fatal(err)
		}
		if res.Stopped != "" || res.Output == nil || len(res.Output.Files) == 0 {
			b.Fatalf("stopped at %q: %v %v", res.Stopped, res.Diagnostics[:min(3, len(res.Diagnostics))], res.Later[:min(3, len(res.Later))])
		}
	}
	b.ReportMetric(float64(procstat.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
}

// BenchmarkLoadOverlays validates 10,000 objects split over 20 parts, once
// as plain files (one deploy unit) and then as 20 kustomize overlays of 20
// bases (20 units, each rendered first): overlays that only include their
// base, overlays that set a namespace and patch a Broker, as environments
// do, overlays that add a label and an annotation, and overlays that add
// a label to selectors too, and overlays that set an image tag, all in
// the subset knc renders itself; and overlays that change a Broker with a
// JSON patch, which kustomize's own renderer builds.
// The overlays knc renders are meant to stay within twice the time of the
// plain files.
func BenchmarkLoadOverlays(b *testing.B) {
	const objects, parts = 10_000, 20
	layouts := []struct {
		name   string
		layout benchcorpus.Layout
	}{
		{"plain", benchcorpus.Plain},
		{"overlays", benchcorpus.Overlays},
		{"patched-overlays", benchcorpus.PatchedOverlays},
		{"labelled-overlays", benchcorpus.LabelledOverlays},
		{"selector-labelled-overlays", benchcorpus.SelectorLabelledOverlays},
		{"image-overlays", benchcorpus.ImageOverlays},
		{"krusty-json-patched-overlays", benchcorpus.JSONPatchedOverlays},
	}
	for _, l := range layouts {
		b.Run("layout="+l.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := benchcorpus.WriteLayout(dir, benchcorpus.Shape{Objects: objects}, parts, l.layout); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			cpu := procstat.CPUTime()
			for b.Loop() {
				res, err := Load(Options{Paths: []string{dir}, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Valid() {
					b.Fatalf("corpus is invalid: %v", res.Diagnostics[:min(3, len(res.Diagnostics))])
				}
				want := parts
				if l.layout == benchcorpus.Plain {
					want = 1
				}
				if len(res.Units) != want || len(res.Set.Triggers) != objects/25*20 {
					b.Fatalf("%d units and %d Triggers, want %d units and %d Triggers", len(res.Units), len(res.Set.Triggers), want, objects/25*20)
				}
			}
			b.ReportMetric(float64(procstat.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(objects), "ns/object")
		})
	}
}

// BenchmarkLoadMemory relates memory to input size, for the Knative corpus
// and for objects made of many tiny scalars, where each byte of input
// becomes a node. alloc-B/in-B is what one Load allocates per input byte;
// live-B/in-B is the heap still in use, after a collection, while the
// result is held, which is what bounds the peak of knc validate.
func BenchmarkLoadMemory(b *testing.B) {
	const scalars = 200_000
	cases := []struct {
		name  string
		write func(dir string) error
	}{
		{"knative-objects=10000", func(dir string) error {
			return benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 10_000})
		}},
		{"flow-sequence", func(dir string) error { return writeNodeHeavy(dir, "flow-sequence", scalars) }},
		{"block-sequence", func(dir string) error { return writeNodeHeavy(dir, "block-sequence", scalars) }},
		{"block-mapping", func(dir string) error { return writeNodeHeavy(dir, "block-mapping", scalars) }},
		{"flow-mapping", func(dir string) error { return writeNodeHeavy(dir, "flow-mapping", scalars) }},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			dir := b.TempDir()
			if err := c.write(dir); err != nil {
				b.Fatal(err)
			}
			input := inputBytes(b, dir)
			b.ReportAllocs()
			b.ResetTimer()
			var live, allocated uint64
			for b.Loop() {
				allocatedBefore := totalAlloc()
				res, err := Load(Options{Paths: []string{dir}, Dir: dir})
				if err != nil {
					b.Fatal(err)
				}
				if !res.Valid() {
					b.Fatalf("corpus is invalid: %v", res.Diagnostics[:min(3, len(res.Diagnostics))])
				}
				b.StopTimer()
				allocated = max(allocated, totalAlloc()-allocatedBefore)
				live = max(live, liveHeap())
				runtime.KeepAlive(res)
				b.StartTimer()
			}
			b.ReportMetric(float64(live)/float64(input), "live-B/in-B")
			b.ReportMetric(float64(allocated)/float64(input), "alloc-B/in-B")
		})
	}
}

// totalAlloc returns the bytes of heap objects allocated so far.
func totalAlloc() uint64 {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.TotalAlloc
}

// liveHeap collects garbage and returns the bytes of heap objects left.
func liveHeap() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}

func inputBytes(b testing.TB, dir string) int64 {
	b.Helper()
	var total int64
	err := filepath.WalkDir(dir, func(_ string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		total += info.Size()
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return total
}

// writeNodeHeavy writes one custom object whose spec holds n one-digit
// scalars in the given layout.
func writeNodeHeavy(dir, layout string, n int) error {
	var sb strings.Builder
	sb.WriteString("apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  items:")
	switch layout {
	case "flow-sequence":
		sb.WriteString(" [")
		for i := range n {
			if i > 0 {
				sb.WriteByte(',')
			}
			sb.WriteByte('1')
		}
		sb.WriteString("]\n")
	case "block-sequence":
		sb.WriteByte('\n')
		for range n {
			sb.WriteString("  - 1\n")
		}
	case "block-mapping":
		sb.WriteByte('\n')
		for i := range n {
			fmt.Fprintf(&sb, "    k%d: 1\n", i)
		}
	case "flow-mapping":
		sb.WriteString(" {")
		for i := range n {
			if i > 0 {
				sb.WriteString(", ")
			}
			fmt.Fprintf(&sb, "k%d: 1", i)
		}
		sb.WriteString("}\n")
	default:
		return fmt.Errorf("unknown layout %q", layout)
	}
	return os.WriteFile(filepath.Join(dir, "widget.yaml"), []byte(sb.String()), 0o644)
}
