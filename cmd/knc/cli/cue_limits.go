package cli

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/knc-dev/knc/internal/cuelimit"
)

// cueLimitFlags bound every CUE evaluation of a command: each CUE
// manifest, each plugin's load and render, and the policies.
type cueLimitFlags struct {
	timeout time.Duration
	memory  string
	limits  cuelimit.Limits
}

func (f *cueLimitFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.DurationVar(&f.timeout, "cue-timeout", cuelimit.Default.Timeout, "stop a CUE evaluation (a .cue manifest, a plugin, the policies) after this `DURATION`, as an error")
	fl.StringVar(&f.memory, "cue-memory", "2Gi", "stop a CUE evaluation when it grows memory by this `QUANTITY` (such as 512Mi), as an error")
}

// policyAliases are the flags that bounded policies alone, before the
// limits applied to every CUE evaluation; they still work, hidden, with
// a warning.
var policyAliases = map[string]string{"policy-timeout": "cue-timeout", "policy-memory": "cue-memory"}

// registerPolicyAliases keeps the flags that bounded policies alone
// working, for the commands that check policies.
func (f *cueLimitFlags) registerPolicyAliases(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.DurationVar(&f.timeout, "policy-timeout", cuelimit.Default.Timeout, "the same as --cue-timeout")
	fl.StringVar(&f.memory, "policy-memory", "2Gi", "the same as --cue-memory")
	for alias := range policyAliases {
		_ = fl.MarkHidden(alias)
	}
}

// parse checks the flags once they are set.
func (f *cueLimitFlags) parse(cmd *cobra.Command) error {
	for _, alias := range slices.Sorted(maps.Keys(policyAliases)) {
		if cmd.Flags().Changed(alias) {
			fmt.Fprintf(cmd.ErrOrStderr(), "knc: warning: --%s is deprecated: use --%s, which bounds CUE manifests and plugins too\n", alias, policyAliases[alias])
		}
	}
	name := "--cue-memory"
	if cmd.Flags().Changed("policy-memory") && !cmd.Flags().Changed("cue-memory") {
		name = "--policy-memory"
	}
	q, err := resource.ParseQuantity(f.memory)
	if err != nil || q.Sign() <= 0 {
		return usageError("%s %q: want a quantity such as 512Mi or 2Gi", name, f.memory)
	}
	if f.timeout <= 0 {
		return usageError("--cue-timeout %s: want a positive duration such as 30s", f.timeout)
	}
	f.limits = cuelimit.Limits{Timeout: f.timeout, Memory: uint64(q.Value())}
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
