package diff

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/internal/gitrev"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
)

// Revision is a project loaded from a git revision.
type Revision struct {
	// Rev is the revision as given; Commit the commit it names.
	Rev    string
	Commit string
	// Result is the project at the revision. File names in its
	// diagnostics and documents read as they would in the work tree.
	Result *compiler.Result
	tmp    string
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

// Close removes the files read from git.
func (r *Revision) Close() error {
	if r.tmp == "" {
		return nil
	}
	return os.RemoveAll(r.tmp)
}

// manifestExts are what the loader reads when it walks a directory; only
// these are read from git, which spares large unrelated files in a
// monorepo.
var manifestExts = []string{".yaml", ".yml", ".json", ".cue"}

// LoadRevision loads the project opts describes as it is at rev: the
// repository's tree at rev, read with git into a temporary directory, is
// compiled from the same paths, taken relative to the repository's root,
// with the knc.yaml of that revision. It works in any
// work tree and in shallow clones, where a missing base commit is an error
// that says how to fetch it. Paths that do not exist at rev hold nothing
// there. Close the revision when done.
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
		if rc, err := repo.Rel(abs(opts.ConfigFile)); err == nil {
			relConfig = rc
		}
	}

	tmp, err := os.MkdirTemp("", "knc-base-")
	if err != nil {
		return nil, err
	}
	r := &Revision{Rev: rev, Commit: commit, tmp: tmp}
	// Compile from the same place in the copy as in the work tree, so
	// that relative paths, --exclude patterns and file names in messages
	// read the same at both revisions.
	baseDir := tmp
	relDir, err := repo.Rel(dir)
	mapped := err == nil
	if mapped {
		baseDir = filepath.Join(tmp, filepath.FromSlash(relDir))
	}
	names := newCopyNames(rev, tmp, baseDir)
	fail := func(err error) (*Revision, error) {
		return nil, errors.Join(names.inError(err), r.Close())
	}
	// The loader looks for knc.yaml upwards until it finds a .git: mark
	// the top of the copy so that it never looks outside it.
	if err := os.Mkdir(filepath.Join(tmp, ".git"), 0o755); err != nil {
		return fail(err)
	}
	keep := func(file string) bool {
		return slices.Contains(manifestExts, path.Ext(file)) || slices.Contains(project.FileNames, path.Base(file)) ||
			slices.Contains(load.KustomizationFileNames, path.Base(file))
	}
	// The whole tree, not only the paths named: an overlay includes
	// ../base, a kustomization may include any directory of the
	// repository, and knc.yaml is looked up above the paths. The paths
	// named are taken whatever their extension, as in the work tree.
	sel := gitrev.Select{Paths: append([]string{"."}, rels...), Keep: keep}
	if relConfig != "" {
		sel.Paths = append(sel.Paths, relConfig)
	}
	if _, err := repo.Extract(ctx, commit, sel, tmp); err != nil {
		return fail(fmt.Errorf("reading %s: %w", rev, err))
	}

	if err := os.MkdirAll(baseDir, 0o755); err != nil {
		return fail(err)
	}
	var basePaths []string
	for i, p := range paths {
		inCopy := filepath.Join(tmp, filepath.FromSlash(rels[i]))
		if _, err := os.Stat(inCopy); errors.Is(err, fs.ErrNotExist) {
			// Not there at the base: a directory holds nothing yet, a
			// file is left out.
			if info, err := os.Stat(abs(p)); err == nil && !info.IsDir() {
				continue
			}
			if err := os.MkdirAll(inCopy, 0o755); err != nil {
				return fail(err)
			}
		}
		if mapped && !filepath.IsAbs(p) {
			// Relative to baseDir, this is inCopy, and reads as given.
			inCopy = p
		}
		basePaths = append(basePaths, inCopy)
	}
	if len(basePaths) == 0 {
		// Every path is a file the base does not have: load an empty
		// directory next to the first, which still finds the base's
		// knc.yaml.
		empty := filepath.Join(tmp, filepath.FromSlash(path.Dir(rels[0])), ".knc-absent")
		if err := os.MkdirAll(empty, 0o755); err != nil {
			return fail(err)
		}
		basePaths = []string{empty}
	}
	cfg := opts.ConfigFile
	if relConfig != "" {
		cfg = filepath.Join(tmp, filepath.FromSlash(relConfig))
	}
	res, err := compiler.Build(ctx, compiler.Options{Paths: basePaths, ConfigFile: cfg, Exclude: opts.Exclude, Dir: baseDir, CUELimits: opts.CUELimits, MaxInputBytes: opts.MaxInputBytes, MaxAliasBytes: opts.MaxAliasBytes, Routes: &compiler.RouteOptions{}})
	if err != nil {
		return fail(fmt.Errorf("loading %s: %w", rev, err))
	}
	// Documents name their files in the copy; name them as in the work
	// tree.
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
