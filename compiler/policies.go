package compiler

import (
	"cmp"
	"path/filepath"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/policy"
	"github.com/knc-dev/knc/internal/inputfs"
)

// PolicyDir is where a project keeps its CUE policies, below its root.
var PolicyDir = policy.Dir

// Policies are the CUE policies the policies stage checks: the project's
// own (PolicyDir below its root), and those of Dirs, such as a platform
// team's repository checked out beside the project.
type Policies struct {
	Dirs []string
}

// exclude keeps the directories of the policies out of the manifests:
// their .cue files are policies, not objects.
func (p *Policies) exclude() []string {
	var out []string
	for _, d := range p.Dirs {
		out = append(out, filepath.ToSlash(filepath.Clean(d)))
	}
	return out
}

// checkPolicies is the policies stage: it checks each deploy unit on its
// own against the project's CUE policies and those of opts.Policies, and
// adds what they find to r.Diagnostics. A violation in a file outside the
// kustomization that built it names that kustomization, once for all the
// overlays that share the file, as the checks' errors do. Mistakes in the
// policies are diagnostics too. The error is for I/O problems, and for an
// evaluation over limits (a *cuelimit.Exceeded; the violations are then
// incomplete).
func (r *Result) checkPolicies(opts Options) error {
	root := r.Root()
	var dirs []string
	// The directory is read from the working directory, and named
	// relative to it in what the policies report.
	own := filepath.Join(root, PolicyDir)
	fsys := inputfs.Or(r.fs)
	if wd, err := workingDir(); err == nil && opts.FS == nil {
		own = diag.RelPath(wd, own)
	}
	if isDir(fsys, own) {
		dirs = append(dirs, own)
	}
	for _, d := range opts.Policies.Dirs {
		if opts.FS != nil {
			d = inFS(cmp.Or(opts.FSMount, DefaultFSMount), r.dir, d)
		}
		dirs = append(dirs, d)
	}
	files, err := policy.Files(fsys, root, dirs)
	if err != nil || len(files) == 0 {
		return err
	}
	set, diags, err := policy.Load(fsys, files, opts.CUELimits)
	if err != nil {
		return err
	}
	if len(diags) == 0 {
		for _, u := range r.Units {
			d, err := set.Check(u.Set.Entries, opts.CUELimits)
			if err != nil {
				return err
			}
			if u.Kustomization != "" {
				d = inUnit(d, u.Kustomization, u.dir, r.dir, u.patches)
			}
			diags = append(diags, d...)
		}
	}
	r.Diagnostics = append(r.Diagnostics, oncePerSharedFile(diags).Relative(r.dir)...).Sorted()
	return nil
}
