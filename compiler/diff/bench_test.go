package diff_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/internal/benchcorpus"
)

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
