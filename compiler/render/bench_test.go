package render_test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/procstat"
	"github.com/knc-dev/knc/plugins"
)

// corpus writes a generated project of n Knative objects (about twenty
// Triggers per Broker, ten namespaces) and returns its directory.
func corpus(b *testing.B, n int) string {
	b.Helper()
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: n, Namespaces: 10}); err != nil {
		b.Fatal(err)
	}
	return dir
}

func loadCorpus(b *testing.B, dir string) *compiler.Result {
	b.Helper()
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	if !res.Valid() {
		b.Fatalf("the corpus is invalid: %v", res.Diagnostics[0])
	}
	return res
}

func renderOutput(b *testing.B, res *compiler.Result) *render.Output {
	b.Helper()
	o, diags, err := render.Render(res.Set, res.Config, render.Options{Backends: plugins.Backends})
	if err != nil {
		b.Fatal(err)
	}
	if len(diags) > 0 {
		b.Fatal(diags)
	}
	return o
}

func renderAndWrite(b *testing.B, res *compiler.Result, out string) {
	b.Helper()
	if err := renderOutput(b, res).Write(out); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkBuild measures knc build -o on 10,000 objects, split into what
// knc validate does (load and check) and what build adds (render and
// write the directory), in the same run. The target is added% < 50.
func BenchmarkBuild(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("objects=%d", n), func(b *testing.B) {
			dir := corpus(b, n)
			out := filepath.Join(b.TempDir(), "out")
			var validate, rendering, writing time.Duration
			// CPU time is steadier than wall time on a busy machine.
			var validateCPU, buildCPU time.Duration
			b.ResetTimer()
			for b.Loop() {
				start, startCPU := time.Now(), procstat.CPUTime()
				res := loadCorpus(b, dir)
				loaded, loadedCPU := time.Now(), procstat.CPUTime()
				o := renderOutput(b, res)
				rendered := time.Now()
				if err := o.Write(out); err != nil {
					b.Fatal(err)
				}
				validate += loaded.Sub(start)
				rendering += rendered.Sub(loaded)
				writing += time.Since(rendered)
				validateCPU += loadedCPU - startCPU
				buildCPU += procstat.CPUTime() - loadedCPU
			}
			b.ReportMetric(100*float64(buildCPU)/float64(validateCPU), "added-cpu%")
			ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(ms(validate), "validate-ms/op")
			b.ReportMetric(ms(rendering), "render-ms/op")
			b.ReportMetric(ms(writing), "write-ms/op")
			b.ReportMetric(100*float64(rendering+writing)/float64(validate), "added%")
			b.ReportMetric(float64(procstat.PeakRSS())/(1<<20), "peak-RSS-MiB")
		})
	}
}

// BenchmarkKustomize measures kustomize build, the library Flux and Argo
// CD use, on knc's output: the root directory, which gathers every object
// into one resource map, and each namespace directory on its own, as one
// Flux Kustomization or Argo CD Application per namespace builds it (the
// time reported is their sum). kustomize's cost grows with the square of
// the objects a build gathers; the root of 10,000 objects takes minutes and
// is skipped under -short.
func BenchmarkKustomize(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		out := filepath.Join(b.TempDir(), "out")
		renderAndWrite(b, loadCorpus(b, corpus(b, n)), out)
		k := krusty.MakeKustomizer(krusty.MakeDefaultOptions())
		fs := filesys.MakeFsOnDisk()
		build := func(dir string) int {
			m, err := k.Run(fs, dir)
			if err != nil {
				b.Fatal(err)
			}
			return m.Size()
		}
		b.Run(fmt.Sprintf("objects=%d/per-namespace", n), func(b *testing.B) {
			namespaces, err := filepath.Glob(filepath.Join(out, render.NamespacesDir, "*"))
			if err != nil || len(namespaces) == 0 {
				b.Fatalf("no namespace directories: %v", err)
			}
			for b.Loop() {
				total := 0
				for _, dir := range namespaces {
					total += build(dir)
				}
				if total < n {
					b.Fatalf("kustomize built %d objects from %d", total, n)
				}
			}
		})
		b.Run(fmt.Sprintf("objects=%d/root", n), func(b *testing.B) {
			if n > 1000 && testing.Short() {
				b.Skip("the root of 10,000 objects takes minutes to build")
			}
			for b.Loop() {
				if got := build(out); got < n {
					b.Fatalf("kustomize built %d objects from %d", got, n)
				}
			}
		})
	}
}

// BenchmarkRender measures rendering alone, from a loaded project.
func BenchmarkRender(b *testing.B) {
	res := loadCorpus(b, corpus(b, 10000))
	b.ResetTimer()
	for b.Loop() {
		renderOutput(b, res)
	}
}
