package cli

import (
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/internal/cuelimit"
)

// The flags every command that reads manifests honours live on the root
// command, as kubectl's and flux's global flags do: given once, before or
// after the command's name, they mean the same for validate, build, diff,
// graph, route, test and run. Commands that read no manifests accept them
// and pass them over.
const (
	flagConfig     = "config"
	flagExclude    = "exclude"
	flagStrict     = "strict"
	flagVerbose    = "verbose"
	flagCUETimeout = "cue-timeout"
	flagCUEMemory  = "cue-memory"
)

// registerGlobalFlags gives root the persistent flags. Their values are
// read back from each command's merged flag set when it runs
// (loadFlags.readGlobal), so a command's constructor needs no handle on
// the root.
func registerGlobalFlags(root *cobra.Command) {
	fl := root.PersistentFlags()
	fl.String(flagConfig, "", "project config file (default: knc.yaml in the first path or a parent, up to the top of the git work tree)")
	fl.StringArray(flagExclude, nil, "skip files and directories matching this path.Match `pattern`, relative to the current directory (repeatable)")
	fl.Bool(flagStrict, false, "treat warnings (checks stricter than Knative's admission) as errors")
	fl.BoolP(flagVerbose, "v", false, "list on stderr the files and directories passed over, and the deploy units found")
	fl.Duration(flagCUETimeout, cuelimit.Default.Timeout, "stop a CUE evaluation (a .cue manifest, a plugin, the policies) after this `DURATION`, as an error")
	fl.String(flagCUEMemory, "2Gi", "stop a CUE evaluation when it grows memory by this `QUANTITY` (such as 512Mi), as an error")
}
