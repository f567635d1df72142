package cli

import (
	"slices"
	"testing"

	"github.com/spf13/pflag"

	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/runtime/command"
)

// TestFlagsAreTheRuntimeTable holds the flags of knc run and knc runtime,
// and so their help, to internal/runtimeconfig's table, which
// docs/runtime-flags.md is generated from: a flag added to either command
// without a row there fails here, as does a row no command has.
func TestFlagsAreTheRuntimeTable(t *testing.T) {
	commands := []struct {
		cmd   runtimeconfig.Command
		flags *pflag.FlagSet
	}{
		{runtimeconfig.Run, runCommandFlags(t)},
		{runtimeconfig.Runtime, command.NewCommand("runtime").Flags()},
	}
	for _, c := range commands {
		c.flags.VisitAll(func(fl *pflag.Flag) {
			f, ok := runtimeconfig.Lookup(fl.Name)
			switch {
			case !ok:
				t.Errorf("--%s of command %d has no row in internal/runtimeconfig's table", fl.Name, c.cmd)
				return
			case f.Commands&c.cmd == 0:
				t.Errorf("--%s: the table does not list command %d, which has it", fl.Name, c.cmd)
			}
			if f.Type != fl.Value.Type() || f.DefaultFor(c.cmd) != fl.DefValue || f.UsageFor(c.cmd) != fl.Usage {
				t.Errorf("--%s of command %d is %s, default %q: %q;\nthe table says %s, default %q: %q",
					fl.Name, c.cmd, fl.Value.Type(), fl.DefValue, fl.Usage, f.Type, f.DefaultFor(c.cmd), f.UsageFor(c.cmd))
			}
		})
	}
	for _, f := range runtimeconfig.Fields {
		for _, c := range commands {
			if f.Commands&c.cmd != 0 && c.flags.Lookup(f.Flag) == nil {
				t.Errorf("the table gives command %d the flag --%s, which it does not have", c.cmd, f.Flag)
			}
		}
	}
	if !slices.IsSortedFunc(runtimeconfig.Fields, func(a, b runtimeconfig.Field) int { return cmpString(a.Flag, b.Flag) }) {
		t.Error("the table's rows are not sorted by flag")
	}
}

// runCommandFlags are the flags knc run takes: its own and the root's global
// flags it inherits.
func runCommandFlags(t *testing.T) *pflag.FlagSet {
	t.Helper()
	run, _, err := newRootCmd().Find([]string{"run"})
	if err != nil {
		t.Fatal(err)
	}
	flags := pflag.NewFlagSet("run", pflag.ContinueOnError)
	flags.AddFlagSet(run.LocalFlags())
	flags.AddFlagSet(run.InheritedFlags())
	return flags
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
