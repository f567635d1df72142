package cli

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/knc-dev/knc/compiler"
)

// loadFlags are the flags of every command that reads manifests.
type loadFlags struct {
	config  string
	exclude []string
	strict  bool
	verbose bool
	stdin   io.Reader
	stderr  io.Writer
	// policies, when set, checks the objects against CUE policies.
	policies *policyFlags
	cue      cueLimitFlags
	// maxInput is --max-input-bytes as given, and maxInputBytes parsed.
	maxInput      string
	maxInputBytes int64
	// maxAlias is --max-alias-bytes as given, and maxAliasBytes parsed.
	maxAlias      string
	maxAliasBytes int64
}

func (f *loadFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "", "project config file (default: knc.yaml in the first path or a parent, up to the top of the git work tree)")
	cmd.Flags().StringArrayVar(&f.exclude, "exclude", nil, "skip files and directories matching this path.Match `pattern`, relative to the current directory (repeatable)")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "treat warnings (checks stricter than Knative's admission) as errors")
	cmd.Flags().BoolVarP(&f.verbose, "verbose", "v", false, "list on stderr the files and directories passed over, and the deploy units found")
	cmd.Flags().StringVar(&f.maxInput, "max-input-bytes", "1Gi", "refuse to read more than this `QUANTITY` (such as 512Mi or 2Gi) from all files and standard input together")
	cmd.Flags().StringVar(&f.maxAlias, "max-alias-bytes", "64Mi", "refuse YAML whose aliases add more than this `QUANTITY` (such as 16Mi) to all documents read together")
	f.cue.register(cmd)
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		f.stdin, f.stderr = cmd.InOrStdin(), cmd.ErrOrStderr()
		if err := f.cue.parse(cmd); err != nil {
			return err
		}
		q, err := resource.ParseQuantity(f.maxInput)
		if err != nil || q.Sign() <= 0 {
			return usageError("--max-input-bytes %q: want a quantity such as 512Mi or 2Gi", f.maxInput)
		}
		f.maxInputBytes = q.Value()
		q, err = resource.ParseQuantity(f.maxAlias)
		if err != nil || q.Sign() <= 0 {
			return usageError("--max-alias-bytes %q: want a quantity such as 16Mi or 256Mi", f.maxAlias)
		}
		f.maxAliasBytes = q.Value()
		if prev != nil {
			return prev(cmd, args)
		}
		return nil
	}
}

// load compiles paths; an I/O error is a usage-level failure (exit 2), a
// CUE manifest over its limits a failure (exit 1).
func (f *loadFlags) load(paths []string) (*compiler.Result, error) {
	exclude := f.exclude
	if f.policies != nil {
		exclude = append(slices.Clip(exclude), f.policies.exclude()...)
	}
	res, err := compiler.Load(f.options(paths, exclude))
	if err != nil {
		return nil, loadFailure(err)
	}
	if f.policies != nil {
		if err := f.policies.check(res, paths, f.cue.limits); err != nil {
			return nil, err
		}
	}
	if f.strict {
		res.Diagnostics = res.Diagnostics.Strict()
	}
	if f.verbose && f.stderr != nil {
		for _, s := range res.Skipped {
			fmt.Fprintf(f.stderr, "knc: skipped %s: %s\n", s.Path, s.Reason)
		}
		for _, u := range res.Units {
			fmt.Fprintf(f.stderr, "knc: deploy unit %s: %d objects, %d of them Knative\n", u.Name(), len(u.Set.Entries), u.Knative())
		}
	}
	return res, nil
}

// options are the compiler's options for paths, exclude being the
// patterns to skip.
func (f *loadFlags) options(paths, exclude []string) compiler.Options {
	return compiler.Options{Paths: paths, ConfigFile: f.config, Exclude: exclude, Stdin: f.stdin, CUELimits: f.cue.limits, MaxInputBytes: f.maxInputBytes, MaxAliasBytes: f.maxAliasBytes}
}

// singleUnit narrows res to the one deploy unit a command that compiles
// needs. Units with no Knative object are left aside when exactly one unit
// has some; otherwise several units are refused, naming them.
func singleUnit(res *compiler.Result, command string) (*compiler.Result, error) {
	if len(res.Units) <= 1 {
		return res, nil
	}
	var withKnative []*compiler.Unit
	for _, u := range res.Units {
		if u.Knative() > 0 {
			withKnative = append(withKnative, u)
		}
	}
	if len(withKnative) == 1 {
		one := *res
		one.Units = withKnative
		one.Set = withKnative[0].Set
		return &one, nil
	}
	var names []string
	example := "PATH"
	for _, u := range withKnative {
		names = append(names, u.Name())
		if u.Kustomization != "" {
			example = u.Kustomization
		}
	}
	more := ""
	if command == "build" {
		more = ", or write each into a subdirectory of its own with -o DIR"
	}
	return nil, usageError("the paths hold %d deploy units, each deployed on its own: %s; %s one at a time, such as knc %s %s%s",
		len(withKnative), strings.Join(names, ", "), command, command, example, more)
}
