package compiler

import (
	"github.com/knc-dev/knc/compiler/policy"
	"github.com/knc-dev/knc/internal/cuelimit"
)

// PolicyDir is where a project keeps its CUE policies, below its root.
var PolicyDir = policy.Dir

// CheckPolicies is the policies stage: it checks each deploy unit of r on
// its own against the CUE policies of the project at root (its PolicyDir)
// and of dirs, and adds what they find to r.Diagnostics. A violation in a
// file outside the kustomization that built it names that kustomization,
// once for all the overlays that share the file, as the checks' errors do.
// Mistakes in the policies are diagnostics too. The error is for I/O
// problems, and for an evaluation over limits (a *cuelimit.Exceeded; the
// violations are then incomplete).
func (r *Result) CheckPolicies(root string, dirs []string, limits cuelimit.Limits) error {
	files, err := policy.Files(root, dirs)
	if err != nil || len(files) == 0 {
		return err
	}
	set, diags, err := policy.Load(files, limits)
	if err != nil {
		return err
	}
	if len(diags) == 0 {
		for _, u := range r.Units {
			d, err := set.Check(u.Set.Entries, limits)
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
