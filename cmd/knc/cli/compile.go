package cli

import (
	"context"
	"errors"
	"fmt"
	"io"

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
	cmd.Flags().StringVar(&f.maxInput, "max-input-bytes", "1Gi", "refuse to read more than this `QUANTITY` (such as 512Mi or 2Gi) from all files and standard input together")
	cmd.Flags().StringVar(&f.maxAlias, "max-alias-bytes", "64Mi", "refuse YAML whose aliases add more than this `QUANTITY` (such as 16Mi) to all documents read together")
	prev := cmd.PreRunE
	cmd.PreRunE = func(cmd *cobra.Command, args []string) error {
		f.stdin, f.stderr = cmd.InOrStdin(), cmd.ErrOrStderr()
		if err := f.readGlobal(cmd); err != nil {
			return err
		}
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

// readGlobal reads the root's persistent flags (global_flags.go) from the
// command's merged flag set.
func (f *loadFlags) readGlobal(cmd *cobra.Command) error {
	fl := cmd.Flags()
	var errs []error
	get := func(err error) { errs = append(errs, err) }
	var err error
	f.config, err = fl.GetString(flagConfig)
	get(err)
	f.exclude, err = fl.GetStringArray(flagExclude)
	get(err)
	f.strict, err = fl.GetBool(flagStrict)
	get(err)
	f.verbose, err = fl.GetBool(flagVerbose)
	get(err)
	// A flag missing here is a command built outside the root, a bug.
	return errors.Join(errs...)
}

// compile runs the compiler's pipeline over paths, as far as more asks:
// more says which units the command works on and the stages it adds (its
// Select, Command, Routes and Render); the flags say the rest. An I/O
// error is a usage-level failure (exit 2), a CUE manifest over its limits
// a failure (exit 1). A unit selection the paths cannot satisfy is a
// usage error returned with the result, whose diagnostics the command
// prints first.
func (f *loadFlags) compile(ctx context.Context, paths []string, more compiler.Options) (*compiler.Result, error) {
	opts := f.options(paths)
	opts.Select, opts.Command, opts.Routes, opts.Render = more.Select, more.Command, more.Routes, more.Render
	if f.policies != nil {
		opts.Policies = &compiler.Policies{Dirs: f.policies.dirs}
	}
	opts.Strict = f.strict
	if f.verbose && f.stderr != nil {
		opts.After = f.report
	}
	res, err := compiler.Build(ctx, opts)
	if err != nil {
		var exit *exitError
		if errors.As(err, &exit) {
			return res, err
		}
		return res, loadFailure(err)
	}
	return res, nil
}

// report lists, with -v, what the pipeline passed over and the deploy units
// it found, and the units a build leaves aside.
func (f *loadFlags) report(stage compiler.Stage, res *compiler.Result) {
	switch stage {
	case compiler.StageCheck:
		for _, s := range res.Skipped {
			fmt.Fprintf(f.stderr, "knc: skipped %s: %s\n", s.Path, s.Reason)
		}
		for _, u := range res.Units {
			fmt.Fprintf(f.stderr, "knc: deploy unit %s: %d objects, %d of them Knative\n", u.Name(), len(u.Set.Entries), u.Knative())
		}
	case compiler.StageSelect:
		for _, u := range res.LeftAside {
			fmt.Fprintf(f.stderr, "knc: deploy unit %s holds no Knative object: not built\n", u.Name())
		}
	}
}

// options are the compiler's options for paths, as the flags set them.
func (f *loadFlags) options(paths []string) compiler.Options {
	return compiler.Options{Paths: paths, ConfigFile: f.config, Exclude: f.exclude, Stdin: f.stdin, CUELimits: f.cue.limits, MaxInputBytes: f.maxInputBytes, MaxAliasBytes: f.maxAliasBytes}
}
