// Package gittest builds real git repositories for tests: a work tree in a
// temporary directory, files written and committed one step at a time.
//
// Repo.Serve serves a repository over smart HTTP on loopback, for clients
// such as Flux's source-controller that clone by URL.
//
// It is imported by tests only, and imports only the standard library.
package gittest

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Repo is a git work tree made for one test.
type Repo struct {
	t   testing.TB
	Dir string
}

// New runs git init in a new temporary directory. The test fails at once
// when git is missing: every caller needs a real repository.
func New(t testing.TB) *Repo {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatalf("git is needed for this test: %v", err)
	}
	dir := t.TempDir()
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	r := &Repo{t: t, Dir: dir}
	r.Git("init", "--quiet", "--initial-branch=main")
	return r
}

// Git runs git in the work tree and returns its standard output; the test
// fails when git does.
func (r *Repo) Git(args ...string) string {
	r.t.Helper()
	out, err := Run(r.Dir, args...)
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return out
}

// Run runs git in dir with a fixed identity and dates, so that commits are
// reproducible, and no user or system configuration.
func Run(dir string, args ...string) (string, error) {
	full := append([]string{"-c", "user.name=knc test", "-c", "user.email=test@knc.invalid", "-c", "commit.gpgsign=false"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull,
		"GIT_AUTHOR_DATE=2026-01-01T00:00:00Z", "GIT_COMMITTER_DATE=2026-01-01T00:00:00Z",
		"GIT_TERMINAL_PROMPT=0", "LC_ALL=C")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", &runError{err: err, stderr: stderr.String()}
	}
	return stdout.String(), nil
}

type runError struct {
	err    error
	stderr string
}

func (e *runError) Error() string { return e.err.Error() + ": " + strings.TrimSpace(e.stderr) }

// Write writes files (slash-separated path to content) into the work tree.
func (r *Repo) Write(files map[string]string) {
	r.t.Helper()
	for name, content := range files {
		p := filepath.Join(r.Dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			r.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Remove deletes files from the work tree.
func (r *Repo) Remove(names ...string) {
	r.t.Helper()
	for _, name := range names {
		if err := os.Remove(filepath.Join(r.Dir, filepath.FromSlash(name))); err != nil {
			r.t.Fatal(err)
		}
	}
}

// Commit stages everything in the work tree, commits it and returns the
// new commit's hash.
func (r *Repo) Commit(message string) string {
	r.t.Helper()
	r.Git("add", "--all")
	r.Git("commit", "--quiet", "--allow-empty", "-m", message)
	return strings.TrimSpace(r.Git("rev-parse", "HEAD"))
}

// ShallowClone clones the repository with --depth depth over file://, as
// CI systems check out, into a new temporary directory.
func (r *Repo) ShallowClone(depth int) *Repo {
	r.t.Helper()
	dir := r.t.TempDir()
	if resolved, err := filepath.EvalSymlinks(dir); err == nil {
		dir = resolved
	}
	clone := filepath.Join(dir, "clone")
	if _, err := Run(dir, "clone", "--quiet", "--depth", strconv.Itoa(depth), "file://"+r.Dir, clone); err != nil {
		r.t.Fatalf("git clone --depth %d: %v", depth, err)
	}
	return &Repo{t: r.t, Dir: clone}
}

// Blob stores content as a blob and returns its hash.
func (r *Repo) Blob(content string) string {
	r.t.Helper()
	return r.withInput(content, "hash-object", "-w", "--stdin")
}

// Tree stores a tree made of ls-tree lines ("<mode> <type> <hash>\t<name>")
// as git mktree takes them, and returns its hash. git mktree accepts
// names that git fsck flags, such as "..", which lets a test make the
// malformed trees a hostile remote could send.
func (r *Repo) Tree(lines ...string) string {
	r.t.Helper()
	return r.withInput(strings.Join(lines, "\n")+"\n", "mktree")
}

// CommitTree makes a commit of tree, with no parent, and returns its hash.
func (r *Repo) CommitTree(tree, message string) string {
	r.t.Helper()
	return strings.TrimSpace(r.Git("commit-tree", tree, "-m", message))
}

func (r *Repo) withInput(input string, args ...string) string {
	r.t.Helper()
	full := append([]string{"-c", "user.name=knc test", "-c", "user.email=test@knc.invalid"}, args...)
	cmd := exec.Command("git", full...)
	cmd.Dir = r.Dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL="+os.DevNull, "LC_ALL=C")
	cmd.Stdin = strings.NewReader(input)
	out, err := cmd.Output()
	if err != nil {
		r.t.Fatalf("git %s: %v", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out))
}
