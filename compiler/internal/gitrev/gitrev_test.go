package gitrev_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func TestExtract(t *testing.T) {
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
	yamlOnly := func(p string) bool { return strings.HasSuffix(p, ".yaml") }

	tests := []struct {
		name string
		sel  gitrev.Select
		want map[string]string
	}{{
		name: "a directory, filtered, and a file named explicitly",
		sel:  gitrev.Select{Paths: []string{"eventing", "eventing/explicit.conf", "knc.yaml"}, Keep: yamlOnly},
		want: map[string]string{
			"eventing/broker.yaml":   "first broker\n",
			"eventing/sub/t.yaml":    "first trigger\n",
			"eventing/explicit.conf": "named explicitly\n",
			"knc.yaml":               "defaultNamespace: a\n",
		},
	}, {
		name: "the whole tree",
		sel:  gitrev.Select{Paths: []string{"."}},
		want: map[string]string{
			"knc.yaml":               "defaultNamespace: a\n",
			"eventing/broker.yaml":   "first broker\n",
			"eventing/sub/t.yaml":    "first trigger\n",
			"eventing/notes.txt":     "not a manifest\n",
			"eventing/explicit.conf": "named explicitly\n",
			"other/x.yaml":           "elsewhere\n",
		},
	}, {
		name: "paths missing at the revision are skipped",
		sel:  gitrev.Select{Paths: []string{"eventing/new.yaml", "nowhere", "other"}},
		want: map[string]string{"other/x.yaml": "elsewhere\n"},
	}, {
		name: "nothing",
		sel:  gitrev.Select{Paths: []string{"nowhere"}},
		want: map[string]string{},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := t.TempDir()
			files, err := repo.Extract(ctx, commit, tt.sel, dst)
			if err != nil {
				t.Fatal(err)
			}
			got := readTree(t, dst)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("extracted files (-want +got):\n%s", diff)
			}
			if len(files) != len(tt.want) {
				t.Errorf("Extract returned %d paths %v, want %d", len(files), files, len(tt.want))
			}
		})
	}
}

func TestExtractKeepsSymlinksAndModes(t *testing.T) {
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
	dst := t.TempDir()
	if _, err := repo.Extract(ctx, commit, gitrev.Select{Paths: []string{"."}}, dst); err != nil {
		t.Fatal(err)
	}
	target, err := os.Readlink(filepath.Join(dst, "link.yaml"))
	if err != nil || target != "real.yaml" {
		t.Errorf("link.yaml: Readlink = %q, %v; want real.yaml", target, err)
	}
	info, err := os.Stat(filepath.Join(dst, "run.sh"))
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

	// The clone's own commit is there, and extracts.
	head, err := shallowRepo.Commit(ctx, "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if _, err := shallowRepo.Extract(ctx, head, gitrev.Select{Paths: []string{"eventing/broker.yaml"}}, dst); err != nil {
		t.Fatal(err)
	}
	if got := readTree(t, dst); got["eventing/broker.yaml"] != "second broker\n" {
		t.Errorf("shallow clone extract = %v", got)
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

func readTree(t *testing.T, dir string) map[string]string {
	t.Helper()
	got := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		got[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// TestExtractRefusesMalformedTrees makes the trees git fsck flags and git
// fetch accepts (git's fsck.c names them: hasDot, hasDotdot, and a
// symbolic link with entries below it), and checks that nothing is written
// outside the destination, nor through a link.
func TestExtractRefusesMalformedTrees(t *testing.T) {
	r := gittest.New(t)
	ctx := context.Background()
	blob := r.Blob("apiVersion: v1\n")
	inner := r.Tree("100644 blob " + blob + "\tfile.yaml")
	outside := r.Blob("../../outside")
	inside := r.Blob("sub")
	yamlOnly := func(p string) bool { return strings.HasSuffix(p, ".yaml") }
	tests := []struct {
		name string
		tree string
		keep func(string) bool
		want string
	}{
		{"dot-dot directory", r.Tree("040000 tree " + inner + "\t.."), nil, `entry "../file.yaml" is not a relative path of plain names`},
		{"dot directory", r.Tree("040000 tree " + inner + "\t."), nil, `entry "./file.yaml" is not a relative path of plain names`},
		{"nested dot-dot", r.Tree("040000 tree " + r.Tree("040000 tree "+r.Tree("040000 tree "+inner+"\t..")+"\t..") + "\ta"), nil, `entry "a/../../file.yaml" is not a relative path of plain names`},
		{"link leading out, directory of the same name", r.Tree("120000 blob "+outside+"\tlink", "040000 tree "+inner+"\tlink"), nil, `"link" is a symbolic link and "link/file.yaml" would be written through it`},
		{"link inside, directory of the same name", r.Tree("040000 tree "+inner+"\tsub", "120000 blob "+inside+"\tlink", "040000 tree "+inner+"\tlink"), nil, `"link" is a symbolic link and "link/file.yaml" would be written through it`},
		// diff --base keeps only manifests: the link itself is not kept,
		// and the files below its name were written as a directory.
		{"link not kept, directory of the same name", r.Tree("120000 blob "+outside+"\tlink", "040000 tree "+inner+"\tlink"), yamlOnly, `"link" is a symbolic link and "link/file.yaml" would be written through it`},
		{"dot-dot not kept", r.Tree("100644 blob "+blob+"\tkept.yaml", "040000 tree "+r.Tree("100644 blob "+blob+"\tREADME")+"\t.."), yamlOnly, `entry "../README" is not a relative path of plain names`},
	}
	repo, err := gitrev.Open(ctx, r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			commit := r.CommitTree(tt.tree, tt.name)
			parent := t.TempDir()
			dst := filepath.Join(parent, "a", "b", "dst")
			_, err := repo.Extract(ctx, commit, gitrev.Select{Paths: []string{"."}, Keep: tt.keep}, dst)
			if !errors.Is(err, gitrev.ErrMalformedTree) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Extract = %v, want %v saying %s", err, gitrev.ErrMalformedTree, tt.want)
			}
			var written []string
			filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					written = append(written, p)
				}
				return nil
			})
			if len(written) > 0 {
				t.Errorf("Extract wrote %v", written)
			}
		})
	}
}
