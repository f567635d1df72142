package diff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/internal/gitrev"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
)

// Revision is a project loaded from a git revision.
type Revision struct {
	// Rev is the revision as given; Commit the commit it names.
	Rev    string
	Commit string
	// Result is the project at the revision. File names in its
	// diagnostics and documents read as they would in the work tree.
	Result *compiler.Result
	tree   *gitrev.Tree
}

// Short is the revision as given, with its abbreviated commit when the two
// differ: "main (1a2b3c4d5e6f)".
func (r *Revision) Short() string {
	c := r.Commit
	if len(c) > 12 {
		c = c[:12]
	}
	if r.Rev == r.Commit || r.Rev == c {
		return c
	}
	return r.Rev + " (" + c + ")"
}

// Close stops reading the revision from git.
func (r *Revision) Close() error {
	if r.tree == nil {
		return nil
	}
	return r.tree.Close()
}

// LoadRevision loads the project opts describes as it is at rev: Build
// reads the repository's tree at rev straight from git's objects (a
// gitrev.Tree), from the same paths, taken relative to the repository's
// root, with the knc.yaml of that revision. Only the files the build
// opens are read. It works in any work tree and in shallow clones, where
// a missing base commit is an error that says how to fetch it. Paths
// that do not exist at rev hold nothing there. Close the revision when
// done.
func LoadRevision(ctx context.Context, rev string, opts compiler.Options) (*Revision, error) {
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	repo, err := gitrev.Open(ctx, dir)
	if err != nil {
		return nil, err
	}
	commit, err := repo.Commit(ctx, rev)
	if err != nil {
		return nil, err
	}
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	abs := func(p string) string {
		if filepath.IsAbs(p) {
			return p
		}
		return filepath.Join(dir, p)
	}
	rels := make([]string, len(paths))
	for i, p := range paths {
		if rels[i], err = repo.Rel(abs(p)); err != nil {
			return nil, fmt.Errorf("comparing with %s: %w", rev, err)
		}
	}
	var relConfig string
	if opts.ConfigFile != "" {
		if relConfig, err = repo.Rel(abs(opts.ConfigFile)); err != nil {
			return nil, fmt.Errorf("comparing with %s: the project config has no version at a revision: %w", rev, err)
		}
	}

	// The build sees the revision at a directory of its own, which no
	// file of the machine is under, and what it says is renamed.
	mount := filepath.Join(string(filepath.Separator), "knc-revision-"+shortCommit(commit))
	// Compile from the same place in the revision as in the work tree,
	// so that relative paths, --exclude patterns and file names in
	// messages read the same at both revisions.
	relDir, err := repo.Rel(dir)
	mapped := err == nil
	if !mapped {
		relDir = "."
	}
	names := newCopyNames(rev, mount, filepath.Join(mount, filepath.FromSlash(relDir)))
	// The whole tree, not only the paths named: an overlay includes
	// ../base, a kustomization may include any directory of the
	// repository, and knc.yaml is looked up above the paths.
	tree, err := repo.Tree(ctx, commit)
	if err != nil {
		return nil, names.inError(fmt.Errorf("reading %s: %w", rev, err))
	}
	r := &Revision{Rev: rev, Commit: commit, tree: tree}
	fail := func(err error) (*Revision, error) {
		return nil, errors.Join(names.inError(err), r.Close())
	}
	var basePaths []string
	for i, p := range paths {
		if _, err := fs.Lstat(tree, rels[i]); errors.Is(err, fs.ErrNotExist) {
			// Not there at the base: a directory holds nothing yet, a
			// file is left out.
			if info, err := os.Stat(abs(p)); err == nil && !info.IsDir() {
				continue
			}
			tree.AddEmptyDir(rels[i])
		}
		if mapped && !filepath.IsAbs(p) {
			// Relative to relDir, as given.
			basePaths = append(basePaths, filepath.ToSlash(p))
			continue
		}
		basePaths = append(basePaths, "/"+rels[i])
	}
	if len(basePaths) == 0 {
		// Every path is a file the base does not have: load an empty
		// directory next to the first, which still finds the base's
		// knc.yaml.
		empty := path.Join(path.Dir(rels[0]), ".knc-absent")
		tree.AddEmptyDir(empty)
		basePaths = []string{"/" + empty}
	}
	var cfg string
	if relConfig != "" {
		cfg = "/" + relConfig
	}
	res, err := compiler.Build(ctx, compiler.Options{FS: tree, FSMount: mount, Dir: relDir, Paths: basePaths, ConfigFile: cfg, Exclude: opts.Exclude, CUELimits: opts.CUELimits, MaxInputBytes: opts.MaxInputBytes, MaxAliasBytes: opts.MaxAliasBytes, Routes: &compiler.RouteOptions{}})
	if err != nil {
		return fail(fmt.Errorf("loading %s: %w", rev, err))
	}
	// Documents name their files as the build saw them; name them as in
	// the work tree.
	// Units share entries with the whole set, and an object two
	// overlays define has an entry in each: rename each entry once.
	renamed := map[*load.Document]bool{}
	rename := func(entries []*model.Entry) {
		for _, e := range entries {
			if !renamed[e.Doc] {
				renamed[e.Doc] = true
				e.Doc.File = names.of(e.Doc.File)
			}
		}
	}
	rename(res.Set.Entries)
	for _, u := range res.Units {
		rename(u.Set.Entries)
	}
	if res.Config.File != "" {
		res.Config.File = names.of(res.Config.File)
	}
	for _, list := range []diag.List{res.Diagnostics, res.Later} {
		for i, d := range list {
			list[i].Pos.File = names.of(d.Pos.File)
			list[i].Message = names.inText(d.Message)
		}
	}
	for i, sk := range res.Skipped {
		res.Skipped[i].Path = names.of(sk.Path)
	}
	r.Result = res
	return r, nil
}

// shortCommit is commit's first twelve characters.
func shortCommit(commit string) string {
	return commit[:min(len(commit), 12)]
}
