package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/gittest"
)

// quickstart reads the quickstart example, to commit into test
// repositories.
func quickstart(t *testing.T) map[string]string {
	t.Helper()
	files := map[string]string{}
	dir := filepath.Join("..", "..", "..", "examples", "quickstart")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files["eventing/"+e.Name()] = string(b)
	}
	return files
}

type exitCase struct {
	name string
	// setup prepares the work tree (and may change directory).
	setup      func(t *testing.T)
	args       []string
	want       int
	wantStderr string
	wantStdout string
}

func runCases(t *testing.T, cases []exitCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			if tt.setup != nil {
				tt.setup(t)
			}
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), tt.args, &bytes.Buffer{}, &stdout, &stderr)
			if got != tt.want {
				t.Errorf("knc %s: exit code %d, want %d\nstdout: %s\nstderr: %s", strings.Join(tt.args, " "), got, tt.want, stdout.String(), stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantStderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.wantStderr, stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout does not say %q:\n%s", tt.wantStdout, stdout.String())
			}
		})
	}
}

// TestDiffBaseExitCodes runs knc diff --base and knc validate --base in
// real repositories: 0 without differences, 1 with differences or
// immutable-field errors, 2 on trouble.
func TestDiffBaseExitCodes(t *testing.T) {
	project := quickstart(t)
	repo := func(t *testing.T, edits ...func(map[string]string)) *gittest.Repo {
		r := gittest.New(t)
		files := map[string]string{}
		for k, v := range project {
			files[k] = v
		}
		r.Write(files)
		r.Commit("base")
		for _, edit := range edits {
			edit(files)
			r.Write(files)
		}
		t.Chdir(r.Dir)
		return r
	}
	moveTrigger := func(files map[string]string) {
		files["eventing/triggers.yaml"] = strings.Replace(files["eventing/triggers.yaml"], "broker: default", "broker: other", 1)
		files["eventing/other.yaml"] = "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: other, namespace: quickstart}\n"
	}
	addTrigger := func(files map[string]string) {
		files["eventing/more.yaml"] = "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: more, namespace: quickstart}\nspec:\n  broker: default\n  subscriber: {uri: http://example.com/}\n"
	}
	breakIt := func(files map[string]string) {
		files["eventing/broken.yaml"] = "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: broken, namespace: quickstart}\nspec:\n  broker: missing\n  subscriber: {uri: http://example.com/}\n"
	}
	runCases(t, []exitCase{
		{name: "no difference", setup: func(t *testing.T) { repo(t) }, args: []string{"diff", "--base", "HEAD", "eventing"}, want: exitOK, wantStdout: "No differences."},
		{name: "a Trigger added", setup: func(t *testing.T) { repo(t, addTrigger) }, args: []string{"diff", "--base", "HEAD", "eventing"}, want: exitFailed, wantStdout: "+ Trigger quickstart/more"},
		{name: "json", setup: func(t *testing.T) { repo(t, addTrigger) }, args: []string{"diff", "--base", "HEAD", "-o", "json", "eventing"}, want: exitFailed, wantStdout: `"routesGained": 1`},
		{name: "markdown", setup: func(t *testing.T) { repo(t, addTrigger) }, args: []string{"diff", "--base", "HEAD", "-o", "markdown", "eventing"}, want: exitFailed, wantStdout: "```mermaid"},
		{name: "immutable field", setup: func(t *testing.T) { repo(t, moveTrigger) }, args: []string{"diff", "--base", "HEAD", "eventing"}, want: exitFailed,
			wantStderr: "eventing/triggers.yaml:8:11: spec.broker: Trigger quickstart/order-created: spec.broker is immutable"},
		{name: "validate --base, immutable field", setup: func(t *testing.T) { repo(t, moveTrigger) }, args: []string{"validate", "--base", "HEAD", "eventing"}, want: exitFailed,
			wantStderr: "must be deleted and re-created"},
		{name: "validate --base -o json", setup: func(t *testing.T) { repo(t, moveTrigger) }, args: []string{"validate", "--base", "HEAD", "-o", "json", "eventing"}, want: exitFailed,
			wantStdout: `"path": "spec.broker"`},
		{name: "validate --base, no immutable field", setup: func(t *testing.T) { repo(t, addTrigger) }, args: []string{"validate", "--base", "HEAD", "eventing"}, want: exitOK},
		{name: "working tree invalid", setup: func(t *testing.T) { repo(t, breakIt) }, args: []string{"diff", "--base", "HEAD", "eventing"}, want: exitTrouble,
			wantStderr: "the manifests in the working tree do not validate"},
		{name: "base invalid", setup: func(t *testing.T) {
			r := repo(t, breakIt)
			r.Commit("broken")
			r.Remove("eventing/broken.yaml")
		}, args: []string{"diff", "--base", "HEAD", "eventing"}, want: exitTrouble, wantStderr: "do not validate:\neventing/broken.yaml:5:11: spec.broker"},
		{name: "validate --base, base invalid", setup: func(t *testing.T) {
			r := repo(t, breakIt)
			r.Commit("broken")
			r.Remove("eventing/broken.yaml")
		}, args: []string{"validate", "--base", "HEAD", "eventing"}, want: exitTrouble, wantStderr: "cannot check immutable fields"},
		{name: "unknown revision", setup: func(t *testing.T) { repo(t) }, args: []string{"diff", "--base", "no-such-branch", "eventing"}, want: exitTrouble, wantStderr: `unknown revision "no-such-branch"`},
		{name: "shallow clone", setup: func(t *testing.T) {
			r := repo(t, addTrigger)
			r.Commit("more")
			t.Chdir(r.ShallowClone(1).Dir)
		}, args: []string{"diff", "--base", "HEAD~1", "eventing"}, want: exitTrouble, wantStderr: "git fetch --deepen"},
		{name: "not a repository", setup: func(t *testing.T) {
			dir := t.TempDir()
			t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
			t.Chdir(dir)
		}, args: []string{"diff", "--base", "HEAD"}, want: exitTrouble, wantStderr: "not inside a git work tree"},
		{name: "-o checked first", args: []string{"diff", "--base", "HEAD", "-o", "yaml"}, want: exitTrouble, wantStderr: `invalid output format "yaml"`},
		{name: "bad --color", args: []string{"diff", "--base", "HEAD", "--color", "sometimes"}, want: exitTrouble, wantStderr: "--color"},
		{name: "neither --base nor --against", args: []string{"diff"}, want: exitTrouble, wantStderr: "diff needs --base GITREF"},
		{name: "both --base and --against", args: []string{"diff", "--base", "HEAD", "--against", "x"}, want: exitTrouble, wantStderr: "give only one of them"},
	})
}

func TestDiffAgainstExitCodes(t *testing.T) {
	project := quickstart(t)
	setup := func(edit func(dir string)) func(t *testing.T) {
		return func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range project {
				p := filepath.Join(dir, filepath.FromSlash(name))
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			t.Chdir(dir)
			var stderr bytes.Buffer
			if code := run(context.Background(), []string{"build", "-o", "deploy", "eventing"}, &bytes.Buffer{}, &bytes.Buffer{}, &stderr); code != exitOK {
				t.Fatalf("knc build: exit code %d: %s", code, stderr.String())
			}
			if edit != nil {
				edit(dir)
			}
		}
	}
	runCases(t, []exitCase{
		{name: "up to date", setup: setup(nil), args: []string{"diff", "--against", "deploy", "eventing"}, want: exitOK, wantStdout: "deploy is up to date"},
		{name: "manifest changed", setup: setup(func(dir string) {
			p := filepath.Join(dir, "eventing", "broker.yaml")
			b, _ := os.ReadFile(p)
			os.WriteFile(p, bytes.Replace(b, []byte("retry: 3"), []byte("retry: 4"), 1), 0o644)
		}), args: []string{"diff", "--against", "deploy", "eventing"}, want: exitFailed, wantStdout: "-    retry: 3\n+    retry: 4\n", wantStderr: "run knc build -o deploy eventing"},
		{name: "file edited by hand", setup: setup(func(dir string) {
			os.WriteFile(filepath.Join(dir, "deploy", "extra.yaml"), []byte("x: 1\n"), 0o644)
		}), args: []string{"diff", "--against", "deploy", "-o", "json", "eventing"}, want: exitFailed, wantStdout: `"change": "removed"`},
		{name: "never built", setup: setup(func(dir string) { os.RemoveAll(filepath.Join(dir, "deploy")) }),
			args: []string{"diff", "--against", "deploy", "eventing"}, want: exitFailed, wantStderr: "deploy does not exist"},
		{name: "invalid manifests", setup: setup(func(dir string) {
			os.WriteFile(filepath.Join(dir, "eventing", "bad.yaml"), []byte("apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: b}\nspec: {broker: nope, subscriber: {uri: http://x/}}\n"), 0o644)
		}), args: []string{"diff", "--against", "deploy", "eventing"}, want: exitTrouble, wantStderr: "do not validate"},
	})
}

func TestGraphExitCodes(t *testing.T) {
	project := quickstart(t)
	setup := func(extra map[string]string) func(t *testing.T) {
		return func(t *testing.T) {
			dir := t.TempDir()
			for name, content := range project {
				p := filepath.Join(dir, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				os.WriteFile(p, []byte(content), 0o644)
			}
			for name, content := range extra {
				os.WriteFile(filepath.Join(dir, filepath.FromSlash(name)), []byte(content), 0o644)
			}
			t.Chdir(dir)
		}
	}
	runCases(t, []exitCase{
		{name: "mermaid", setup: setup(nil), args: []string{"graph", "eventing"}, want: exitOK, wantStdout: "flowchart LR"},
		{name: "dot", setup: setup(nil), args: []string{"graph", "-o", "dot", "eventing"}, want: exitOK, wantStdout: "digraph knc {"},
		{name: "svg", setup: setup(nil), args: []string{"graph", "-o", "svg", "eventing"}, want: exitOK, wantStdout: `<svg width="`},
		{name: "png", setup: setup(nil), args: []string{"graph", "-o", "png", "eventing"}, want: exitOK, wantStdout: "\x89PNG\r\n"},
		{name: "focus names nothing", setup: setup(nil), args: []string{"graph", "--focus", "Trigger/quickstart/nope", "eventing"}, want: exitTrouble, wantStderr: "--focus Trigger/quickstart/nope: no node of the graph has that name"},
		{name: "invalid", setup: setup(map[string]string{"eventing/bad.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: b}\nspec: {broker: nope, subscriber: {uri: http://x/}}\n"}),
			args: []string{"graph", "eventing"}, want: exitFailed, wantStderr: "eventing/bad.yaml:4:16: spec.broker"},
		{name: "bad -o", args: []string{"graph", "-o", "gif"}, want: exitTrouble, wantStderr: "use one of mermaid, dot, svg, png"},
	})
}
