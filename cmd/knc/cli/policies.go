package cli

import (
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/cuelimit"
)

// policyFlags are the flags of the commands that check CUE policies.
type policyFlags struct {
	dirs []string
}

// registerPolicies makes the command check the objects against the
// project's policies, and those of --policies.
func (f *loadFlags) registerPolicies(cmd *cobra.Command) {
	f.policies = &policyFlags{}
	fl := cmd.Flags()
	fl.StringArrayVar(&f.policies.dirs, "policies", nil, "also check the CUE policies in `DIR`, such as a platform team's repository checked out beside this one (repeatable)")
	f.cue.registerPolicyAliases(cmd)
}

// exclude keeps the directories of --policies out of the manifests: their
// .cue files are policies, not objects.
func (f *policyFlags) exclude() []string {
	var out []string
	for _, d := range f.dirs {
		out = append(out, filepath.ToSlash(filepath.Clean(d)))
	}
	return out
}

// policyDirs are the project's .knc/policies, when it exists, and the
// directories given.
func (f *policyFlags) policyDirs(res *compiler.Result, paths []string) []string {
	var dirs []string
	own := filepath.Join(projectRoot(res, paths), compiler.PolicyDir)
	if wd, err := os.Getwd(); err == nil {
		own = diag.RelPath(wd, own)
	}
	if info, err := os.Stat(own); err == nil && info.IsDir() {
		dirs = append(dirs, own)
	}
	return append(dirs, f.dirs...)
}

// check runs the policies stage over res: the project's policies and
// those of --policies, each deploy unit on its own, under limits.
func (f *policyFlags) check(res *compiler.Result, paths []string, limits cuelimit.Limits) error {
	if err := res.CheckPolicies(projectRoot(res, paths), f.policyDirs(res, paths), limits); err != nil {
		return loadFailure(err)
	}
	return nil
}
