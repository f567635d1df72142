package cli

import (
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
)

// loadFlags are the flags of every command that reads manifests.
type loadFlags struct {
	config  string
	exclude []string
	strict  bool
}

func (f *loadFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.config, "config", "", "project config file (default: knc.yaml in the first path or a parent, up to the top of the git work tree)")
	cmd.Flags().StringArrayVar(&f.exclude, "exclude", nil, "skip files and directories matching this path.Match `pattern`, relative to the current directory (repeatable)")
	cmd.Flags().BoolVar(&f.strict, "strict", false, "treat warnings (checks stricter than Knative's admission) as errors")
}

// load compiles paths; an I/O error is a usage-level failure (exit 2).
func (f *loadFlags) load(paths []string) (*compiler.Result, error) {
	res, err := compiler.Load(compiler.Options{Paths: paths, ConfigFile: f.config, Exclude: f.exclude})
	if err != nil {
		return nil, &exitError{code: exitTrouble, err: err}
	}
	if f.strict {
		res.Diagnostics = res.Diagnostics.Strict()
	}
	return res, nil
}
