package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/knc-dev/knc/internal/cuelimit"
)

// cueLimitFlags bound every CUE evaluation of a command: each CUE
// manifest, each plugin's load and render, and the policies.
type cueLimitFlags struct {
	limits cuelimit.Limits
}

// policyAliases are the flags that bounded policies alone, before the
// limits applied to every CUE evaluation; they still work, hidden, with
// a warning.
var policyAliases = map[string]string{"policy-timeout": "cue-timeout", "policy-memory": "cue-memory"}

// registerPolicyAliases keeps the flags that bounded policies alone
// working, for the commands that check policies.
func (f *cueLimitFlags) registerPolicyAliases(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.Duration("policy-timeout", cuelimit.Default.Timeout, "the same as --cue-timeout")
	fl.String("policy-memory", "2Gi", "the same as --cue-memory")
	for alias := range policyAliases {
		_ = fl.MarkHidden(alias)
	}
}

// parse checks the flags once they are set: --cue-timeout and --cue-memory
// from the root, or a deprecated alias the command has, when it is given
// and the flag it stands for is not.
func (f *cueLimitFlags) parse(cmd *cobra.Command) error {
	fl := cmd.Flags()
	for _, alias := range slices.Sorted(maps.Keys(policyAliases)) {
		if fl.Changed(alias) {
			fmt.Fprintf(cmd.ErrOrStderr(), "knc: warning: --%s is deprecated: use --%s, which bounds CUE manifests and plugins too\n", alias, policyAliases[alias])
		}
	}
	timeoutFlag, memoryFlag := flagCUETimeout, flagCUEMemory
	if fl.Changed("policy-timeout") && !fl.Changed(flagCUETimeout) {
		timeoutFlag = "policy-timeout"
	}
	if fl.Changed("policy-memory") && !fl.Changed(flagCUEMemory) {
		memoryFlag = "policy-memory"
	}
	timeout, err := fl.GetDuration(timeoutFlag)
	if err != nil {
		return err
	}
	memory, err := fl.GetString(memoryFlag)
	if err != nil {
		return err
	}
	q, err := resource.ParseQuantity(memory)
	if err != nil || q.Sign() <= 0 {
		return usageError("--%s %q: want a quantity such as 512Mi or 2Gi", memoryFlag, memory)
	}
	if timeout <= 0 {
		return usageError("--%s %s: want a positive duration such as 30s", timeoutFlag, timeout)
	}
	f.limits = cuelimit.Limits{Timeout: timeout, Memory: uint64(q.Value())}
	return nil
}

// loadFailure is the exit of a load or render that failed: exit 1 with
// the error when a CUE evaluation went over its limits (the input is at
// fault, and Main's return stops the evaluation, which cannot be
// interrupted), exit 2 for I/O trouble.
func loadFailure(err error) error {
	var ex *cuelimit.Exceeded
	if errors.As(err, &ex) {
		return &exitError{code: exitFailed, err: err}
	}
	return &exitError{code: exitTrouble, err: err}
}
