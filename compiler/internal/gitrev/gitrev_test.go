package gitrev_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/internal/gitrev"
	"github.com/knc-dev/knc/internal/gittest"
)

// history builds a repository with two commits and returns it with the
// first commit.
func history(t *testing.T) (*gittest.Repo, string) {
	t.Helper()
	r := gittest.New(t)
	r.Write(map[string]string{
		"knc.yaml":               "defaultNamespace: a\n",
		"eventing/broker.yaml":   "first broker\n",
		"eventing/sub/t.yaml":    "first trigger\n",
		"eventing/notes.txt":     "not a manifest\n",
		"eventing/explicit.conf": "named explicitly\n",
		"other/x.yaml":           "elsewhere\n",
	})
	first := r.Commit("first")
	r.Write(map[string]string{"eventing/broker.yaml": "second broker\n", "eventing/new.yaml": "added later\n"})
	r.Remove("eventing/sub/t.yaml")
	r.Commit("second")
	return r, first
}

// TestTree reads the tree of a commit as an fs.FS: every file as it was
// then, the top's .git directory, and nothing the commit after added.
func TestTree(t *testing.T) {
	r, first := history(t)
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, filepath.Join(r.Dir, "eventing"))
	if err != nil {
		t.Fatal(err)
	}
	if repo.Root() != r.Dir {
		t.Errorf("Root() = %q, want %q", repo.Root(), r.Dir)
	}
	commit, err := repo.Commit(ctx, "HEAD~1")
	if err != nil {
		t.Fatal(err)
	}
	if commit != first {
		t.Errorf("Commit(HEAD~1) = %s, want %s", commit, first)
	}
	tree, err := repo.Tree(ctx, commit)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := tree.Close(); err != nil {
			t.Error(err)
		}
	}()
	if err := fstest.TestFS(tree, "knc.yaml", "eventing/broker.yaml", "eventing/sub/t.yaml", "other/x.yaml", ".git"); err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = fs.WalkDir(tree, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(tree, p)
		got[p] = string(data)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"knc.yaml":               "defaultNamespace: a\n",
		"eventing/broker.yaml":   "first broker\n",
		"eventing/sub/t.yaml":    "first trigger\n",
		"eventing/notes.txt":     "not a manifest\n",
		"eventing/explicit.conf": "named explicitly\n",
		"other/x.yaml":           "elsewhere\n",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files of the tree (-want +got):\n%s", diff)
	}
	if _, err := fs.Stat(tree, "eventing/new.yaml"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Stat of a file added later = %v, want fs.ErrNotExist", err)
	}
	tree.AddEmptyDir("eventing/later")
	if entries, err := fs.ReadDir(tree, "eventing/later"); err != nil || len(entries) != 0 {
		t.Errorf("ReadDir of a directory added as empty = %v, %v; want it empty", entries, err)
	}
}

func TestTreeKeepsSymlinksAndModes(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"real.yaml": "x\n", "run.sh": "#!/bin/sh\n"})
	if err := os.Symlink("real.yaml", filepath.Join(r.Dir, "link.yaml")); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(r.Dir, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	commit := r.Commit("links")
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tree, err := repo.Tree(ctx, commit)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	target, err := fs.ReadLink(tree, "link.yaml")
	if err != nil || target != "real.yaml" {
		t.Errorf("link.yaml: ReadLink = %q, %v; want real.yaml", target, err)
	}
	if info, err := fs.Lstat(tree, "link.yaml"); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Errorf("link.yaml: Lstat = %v, %v; want a symbolic link", info, err)
	}
	if _, err := tree.Open("link.yaml"); err == nil {
		t.Error("Open of a link followed it; the reader must resolve links itself")
	}
	info, err := fs.Stat(tree, "run.sh")
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh lost its executable bit: %v", info.Mode())
	}
}

func TestCommitErrors(t *testing.T) {
	r, first := history(t)
	ctx := context.Background()
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	shallow := r.ShallowClone(1)
	shallowRepo, err := gitrev.Open(ctx, shallow.Dir)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		repo    *gitrev.Repo
		rev     string
		wantMsg []string
	}{
		{"missing branch", repo, "no-such-branch", []string{`"no-such-branch"`, "no such commit"}},
		{"option-like revision", repo, "--all", []string{`"--all"`}},
		{"empty revision", repo, "", []string{`""`}},
		{"base outside a shallow clone", shallowRepo, first, []string{"shallow clone", "git fetch --deepen", "fetch-depth: 0"}},
		{"parent outside a shallow clone", shallowRepo, "HEAD~1", []string{"shallow clone", "git fetch --unshallow"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := tt.repo.Commit(ctx, tt.rev)
			if !errors.Is(err, gitrev.ErrUnknownRevision) {
				t.Fatalf("Commit(%q) = %v, want ErrUnknownRevision", tt.rev, err)
			}
			for _, m := range tt.wantMsg {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not say %q", err, m)
				}
			}
		})
	}

	// The clone's own commit is there, and reads.
	head, err := shallowRepo.Commit(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	tree, err := shallowRepo.Tree(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.Close()
	if got, err := fs.ReadFile(tree, "eventing/broker.yaml"); err != nil || string(got) != "second broker\n" {
		t.Errorf("shallow clone's eventing/broker.yaml = %q, %v", got, err)
	}
}

func TestOpenOutsideRepository(t *testing.T) {
	dir := t.TempDir()
	// Keep git from looking above the temporary directory, in case that
	// lies inside a work tree.
	t.Setenv("GIT_CEILING_DIRECTORIES", filepath.Dir(dir))
	_, err := gitrev.Open(context.Background(), dir)
	if !errors.Is(err, gitrev.ErrNotRepository) {
		t.Fatalf("Open(%s) = %v, want ErrNotRepository", dir, err)
	}
}

func TestRel(t *testing.T) {
	r := gittest.New(t)
	r.Write(map[string]string{"a/b.yaml": "x\n"})
	repo, err := gitrev.Open(context.Background(), r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(r.Dir, "a"))
	for _, tt := range []struct{ in, want string }{
		{"b.yaml", "a/b.yaml"},
		{".", "a"},
		{"..", "."},
		{"gone/later.yaml", "a/gone/later.yaml"},
		{filepath.Join(r.Dir, "a", "b.yaml"), "a/b.yaml"},
	} {
		got, err := repo.Rel(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Rel(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
	if _, err := repo.Rel("../.."); err == nil {
		t.Errorf("Rel(../..) succeeded for a path outside the work tree")
	}
}

// TestTreeRefusesMalformedTrees makes the trees git fsck flags and git
// fetch accepts (git's fsck.c names them: hasDot, hasDotdot, and a
// symbolic link with entries below it), and checks that Tree refuses
// them before anything reads them.
func TestTreeRefusesMalformedTrees(t *testing.T) {
	r := gittest.New(t)
	ctx := context.Background()
	blob := r.Blob("apiVersion: v1\n")
	inner := r.Tree("100644 blob " + blob + "\tfile.yaml")
	outside := r.Blob("../../outside")
	inside := r.Blob("sub")
	tests := []struct {
		name string
		tree string
		want string
	}{
		{"dot-dot directory", r.Tree("040000 tree " + inner + "\t.."), `entry "../file.yaml" is not a relative path of plain names`},
		{"dot directory", r.Tree("040000 tree " + inner + "\t."), `entry "./file.yaml" is not a relative path of plain names`},
		{"nested dot-dot", r.Tree("040000 tree " + r.Tree("040000 tree "+r.Tree("040000 tree "+inner+"\t..")+"\t..") + "\ta"), `entry "a/../../file.yaml" is not a relative path of plain names`},
		{"link leading out, directory of the same name", r.Tree("120000 blob "+outside+"\tlink", "040000 tree "+inner+"\tlink"), `"link" is a symbolic link and "link/file.yaml" would be written through it`},
		{"link inside, directory of the same name", r.Tree("040000 tree "+inner+"\tsub", "120000 blob "+inside+"\tlink", "040000 tree "+inner+"\tlink"), `"link" is a symbolic link and "link/file.yaml" would be written through it`},
		{"dot-dot beside a manifest", r.Tree("100644 blob "+blob+"\tkept.yaml", "040000 tree "+r.Tree("100644 blob "+blob+"\tREADME")+"\t.."), `entry "../README" is not a relative path of plain names`},
	}
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			commit := r.CommitTree(tt.tree, tt.name)
			tree, err := repo.Tree(ctx, commit)
			if !errors.Is(err, gitrev.ErrMalformedTree) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Tree = %v, %v; want %v saying %s", tree, err, gitrev.ErrMalformedTree, tt.want)
			}
		})
	}
}
