package diff_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/diff"
)

func TestUnified(t *testing.T) {
	tests := []struct {
		name     string
		old, new string
		want     string
	}{
		{"equal", "a\nb\n", "a\nb\n", ""},
		{"one line changed", "a\nb\nc\n", "a\nB\nc\n", "--- old\n+++ new\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"},
		{"from nothing", "", "a\nb\n", "--- old\n+++ new\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"to nothing", "a\n", "", "--- old\n+++ new\n@@ -1 +0,0 @@\n-a\n"},
		{"no newline at end", "a\nb", "a\nc", "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"},
		{
			"two hunks",
			"1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n",
			"1\nTWO\n3\n4\n5\n6\n7\n8\n9\n10\nELEVEN\n12\n",
			"--- old\n+++ new\n@@ -1,5 +1,5 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n@@ -8,5 +8,5 @@\n 8\n 9\n 10\n-11\n+ELEVEN\n 12\n",
		},
		{
			"hunks joined by their context",
			"1\n2\n3\n4\n5\n6\n7\n",
			"1\nTWO\n3\n4\n5\nSIX\n7\n",
			"--- old\n+++ new\n@@ -1,7 +1,7 @@\n 1\n-2\n+TWO\n 3\n 4\n 5\n-6\n+SIX\n 7\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := diff.Unified("old", "new", []byte(tt.old), []byte(tt.new), 3)
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("Unified (-want +got):\n%s", d)
			}
		})
	}
}

// TestUnifiedAgainstPatch checks random edits: patch(1) must turn the old
// text into the new one with the diff, and the diff must change no more
// lines than GNU diff --minimal does.
func TestUnifiedAgainstPatch(t *testing.T) {
	patch, err := exec.LookPath("patch")
	if err != nil {
		t.Fatalf("patch(1) is needed for this test: %v", err)
	}
	gnuDiff, err := exec.LookPath("diff")
	if err != nil {
		t.Fatalf("diff(1) is needed for this test: %v", err)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	dir := t.TempDir()
	for i := range 60 {
		old := randomText(rng, rng.IntN(40))
		new := mutate(rng, old)
		oldFile := filepath.Join(dir, "old.txt")
		newFile := filepath.Join(dir, "new.txt")
		if err := os.WriteFile(oldFile, []byte(old), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(newFile, []byte(new), 0o644); err != nil {
			t.Fatal(err)
		}
		u := diff.Unified("old.txt", "new.txt", []byte(old), []byte(new), 3)
		if old == new {
			if u != "" {
				t.Fatalf("case %d: equal texts gave a diff:\n%s", i, u)
			}
			continue
		}
		cmd := exec.Command(patch, "--quiet", "--force", "--output=-", oldFile)
		cmd.Stdin = strings.NewReader(u)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("case %d: patch failed: %v\nold:\n%s\nnew:\n%s\ndiff:\n%s", i, err, old, new, u)
		}
		if string(out) != new {
			t.Fatalf("case %d: patch gave\n%s\nwant\n%s\ndiff:\n%s", i, out, new, u)
		}
		ref, err := exec.Command(gnuDiff, "--minimal", "-u", oldFile, newFile).Output()
		var ee *exec.ExitError
		if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 1) {
			t.Fatal(err)
		}
		if got, want := changedLines(u), changedLines(string(ref)); got != want {
			t.Errorf("case %d: %d lines changed, diff --minimal changes %d:\n%s\nreference:\n%s", i, got, want, u, ref)
		}
	}
}

func randomText(rng *rand.Rand, n int) string {
	var b strings.Builder
	for range n {
		// A small alphabet makes equal lines common, which is where
		// diffs go wrong.
		fmt.Fprintf(&b, "line %d\n", rng.IntN(6))
	}
	return b.String()
}

func mutate(rng *rand.Rand, text string) string {
	lines := strings.SplitAfter(text, "\n")
	lines = lines[:len(lines)-1]
	for range rng.IntN(6) {
		switch p := rng.IntN(len(lines) + 1); rng.IntN(3) {
		case 0:
			lines = append(lines[:p], append([]string{"new " + strconv.Itoa(rng.IntN(4)) + "\n"}, lines[p:]...)...)
		case 1:
			if p < len(lines) {
				lines = append(lines[:p], lines[p+1:]...)
			}
		default:
			if p < len(lines) {
				lines[p] = "changed " + strconv.Itoa(rng.IntN(4)) + "\n"
			}
		}
	}
	return strings.Join(lines, "")
}

func changedLines(u string) int {
	n := 0
	for _, l := range strings.Split(u, "\n") {
		if (strings.HasPrefix(l, "+") || strings.HasPrefix(l, "-")) && !strings.HasPrefix(l, "+++") && !strings.HasPrefix(l, "---") {
			n++
		}
	}
	return n
}

func TestCompareDir(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(".knc-output", "marker\n")
	write("kustomization.yaml", "resources: [a]\n")
	write("namespaces/a/objects.yaml", "x: 1\n")
	write("namespaces/old/objects.yaml", "y: 1\n")
	build := map[string][]byte{
		"kustomization.yaml":        []byte("resources: [a]\n"),
		"namespaces/a/objects.yaml": []byte("x: 2\n"),
		"routing-table.json":        []byte("{}\n"),
	}
	got, err := diff.CompareDir(build, dir, "deploy")
	if err != nil {
		t.Fatal(err)
	}
	want := []diff.FileDiff{
		{Path: "namespaces/a/objects.yaml", Change: diff.Changed, Diff: "--- a/deploy/namespaces/a/objects.yaml\n+++ b/deploy/namespaces/a/objects.yaml\n@@ -1 +1 @@\n-x: 1\n+x: 2\n"},
		{Path: "namespaces/old/objects.yaml", Change: diff.Removed, Diff: "--- a/deploy/namespaces/old/objects.yaml\n+++ /dev/null\n@@ -1 +0,0 @@\n-y: 1\n"},
		{Path: "routing-table.json", Change: diff.Added, Diff: "--- /dev/null\n+++ b/deploy/routing-table.json\n@@ -0,0 +1 @@\n+{}\n"},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("CompareDir (-want +got):\n%s", d)
	}

	missing, err := diff.CompareDir(build, filepath.Join(dir, "nowhere"), "nowhere")
	if err != nil {
		t.Fatal(err)
	}
	if len(missing) != len(build) {
		t.Errorf("a missing directory gave %d differences, want every file of the build (%d)", len(missing), len(build))
	}
	same, err := diff.CompareDir(map[string][]byte{"kustomization.yaml": []byte("resources: [a]\n"), "namespaces/a/objects.yaml": []byte("x: 1\n"), "namespaces/old/objects.yaml": []byte("y: 1\n")}, dir, "deploy")
	if err != nil || len(same) != 0 {
		t.Errorf("CompareDir of the same files = %v, %v; want none", same, err)
	}
}

func BenchmarkUnified(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	old := randomText(rng, 5000)
	new := mutate(rng, old)
	for b.Loop() {
		diff.Unified("a", "b", []byte(old), []byte(new), 3)
	}
}
