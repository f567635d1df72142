package diff_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/gittest"
	"github.com/knc-dev/knc/internal/procstat"
)

// BenchmarkLoadRevision loads the revision before the last of a
// repository of 10,000 objects in 20 overlays, as knc diff --base does
// before it compares: for the whole repository, and for one overlay.
// cpu-ns/op counts knc's own CPU, git-cpu-ns/op that of the git commands
// it ran.
func BenchmarkLoadRevision(b *testing.B) {
	const objects, parts = 10_000, 20
	r := gittest.New(b)
	if err := benchcorpus.WriteLayout(r.Dir, benchcorpus.Shape{Objects: objects}, parts, benchcorpus.Overlays); err != nil {
		b.Fatal(err)
	}
	r.Commit("base")
	r.Write(map[string]string{"README.md": "the change under review\n"})
	r.Commit("head")
	for _, tt := range []struct {
		name  string
		paths []string
		units int
	}{
		{"whole", []string{"."}, parts},
		{"one-overlay", []string{"overlays/part-3"}, 1},
	} {
		b.Run("paths="+tt.name, func(b *testing.B) {
			cpu, git := procstat.CPUTime(), procstat.ChildrenCPUTime()
			for b.Loop() {
				rev, err := diff.LoadRevision(context.Background(), "HEAD~1", compiler.Options{Dir: r.Dir, Paths: tt.paths})
				if err != nil {
					b.Fatal(err)
				}
				if err := rev.Close(); err != nil {
					b.Fatal(err)
				}
				if res := rev.Result; !res.Valid() || len(res.Units) != tt.units {
					b.Fatalf("%d units, diagnostics %v; want %d units, valid", len(res.Units), res.Diagnostics[:min(3, len(res.Diagnostics))], tt.units)
				}
			}
			b.ReportMetric(float64(procstat.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
			b.ReportMetric(float64(procstat.ChildrenCPUTime()-git)/float64(b.N), "git-cpu-ns/op")
		})
	}
}

// BenchmarkCompare compares two revisions of a 10,000-object corpus that
// differ in one Trigger's filter and one Broker's delivery: the work of
// knc diff --base after both revisions are loaded.
func BenchmarkCompare(b *testing.B) {
	baseDir, headDir := b.TempDir(), b.TempDir()
	shape := benchcorpus.Shape{Objects: 10000, Namespaces: 10}
	for _, dir := range []string{baseDir, headDir} {
		if err := benchcorpus.WriteByKind(dir, shape); err != nil {
			b.Fatal(err)
		}
	}
	edit(b, filepath.Join(headDir, "triggers.yaml"), "type: ", "type: changed.")
	edit(b, filepath.Join(headDir, "brokers.yaml"), "retry: ", "retry: 1")
	base, head := side(b, baseDir), side(b, headDir)
	b.ResetTimer()
	for b.Loop() {
		rep := diff.Compare(base, head)
		if !rep.Different {
			b.Fatal("no differences")
		}
		if err := rep.WriteText(io.Discard, false); err != nil {
			b.Fatal(err)
		}
	}
}

func edit(b *testing.B, file, old, new string) {
	data, err := os.ReadFile(file)
	if err != nil {
		b.Fatal(err)
	}
	if !bytes.Contains(data, []byte(old)) {
		b.Fatalf("%s holds no %q", file, old)
	}
	if err := os.WriteFile(file, []byte(strings.Replace(string(data), old, new, 1)), 0o644); err != nil {
		b.Fatal(err)
	}
}

func side(b *testing.B, dir string) diff.Side {
	res, err := compiler.Load(compiler.Options{Paths: []string{dir}, Routes: &compiler.RouteOptions{}})
	if err != nil {
		b.Fatal(err)
	}
	if !res.Valid() {
		b.Fatalf("corpus does not validate: %v", res.Diagnostics[:1])
	}
	if len(res.Later) > 0 || res.Table == nil {
		b.Fatalf("corpus does not compile to one routing table: %v", res.Later)
	}
	return diff.Side{Set: res.Set, Config: res.Config, Table: res.Table}
}
