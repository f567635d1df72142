package cli

import (
	"github.com/spf13/cobra"
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
