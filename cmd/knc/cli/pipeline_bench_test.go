package cli

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/procstat"
)

// The benchmarks below run the commands in process, as a user runs them,
// over generated corpora: they measure the whole pipeline, from the walk
// to what the command prints. Run with -count 5 and compare medians.

// BenchmarkValidate is knc validate of 10,000 objects.
func BenchmarkValidate(b *testing.B) {
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 10_000}); err != nil {
		b.Fatal(err)
	}
	benchCommand(b, dir, 0, "validate", ".")
}

// BenchmarkBuild is knc build of 10,000 objects to standard output.
func BenchmarkBuild(b *testing.B) {
	dir := b.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 10_000}); err != nil {
		b.Fatal(err)
	}
	benchCommand(b, dir, 0, "build", ".")
}

// BenchmarkDiffBase is knc diff --base of a repository of 10,000 objects in
// 20 overlays, each patching its base as environments do, where the last
// commit changed one Trigger of one base.
func BenchmarkDiffBase(b *testing.B) {
	if _, err := exec.LookPath("git"); err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	if err := benchcorpus.WriteLayout(dir, benchcorpus.Shape{Objects: 10_000}, 20, benchcorpus.PatchedOverlays); err != nil {
		b.Fatal(err)
	}
	git := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=knc", "GIT_AUTHOR_EMAIL=knc@example.com", "GIT_COMMITTER_NAME=knc", "GIT_COMMITTER_EMAIL=knc@example.com")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	git("init", "-q", "-b", "main")
	git("add", ".")
	git("commit", "-q", "-m", "base")
	triggers := filepath.Join(dir, "part-3", "triggers.yaml")
	data, err := os.ReadFile(triggers)
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(triggers, bytes.Replace(data, []byte("type: "), []byte("type: changed."), 1), 0o644); err != nil {
		b.Fatal(err)
	}
	git("commit", "-q", "-a", "-m", "change")
	// Exit status 1: the revisions differ.
	benchCommand(b, dir, 1, "diff", "--base", "HEAD~1", ".")
}

// benchCommand runs knc with args in dir, and expects the exit status code.
func benchCommand(b *testing.B, dir string, code int, args ...string) {
	b.Chdir(dir)
	ctx := context.Background()
	var stderr bytes.Buffer
	b.ReportAllocs()
	b.ResetTimer()
	cpu := procstat.CPUTime()
	for b.Loop() {
		stderr.Reset()
		if got := run(ctx, args, strings.NewReader(""), io.Discard, &stderr); got != code {
			b.Fatalf("knc %s: exit status %d, want %d\n%s", strings.Join(args, " "), got, code, stderr.String())
		}
	}
	// CPU time says what a run costs whatever other jobs on the machine
	// do to the wall clock; git's own processes are not counted.
	b.ReportMetric(float64(procstat.CPUTime()-cpu)/float64(b.N), "cpu-ns/op")
}
