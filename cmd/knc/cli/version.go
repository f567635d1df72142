package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/internal/version"
)

func newVersionCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "version [-o text|json]",
		Short: "Print knc's version, commit and Go version",
		Long: `Version prints the version of knc, the git commit it was built from and
the Go version that built it, and the runtime image knc build writes by
default. Release builds have them stamped at build time; other builds
take what the Go toolchain recorded (go install module@version, or a
build inside a git work tree), else report (devel).`,
		Example: `  knc version
  knc version -o json | jq -r .version`,
		Args: cobra.NoArgs,
		PreRunE: func(*cobra.Command, []string) error {
			return checkOutput(output, "text", "json")
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := version.Get()
			image, _ := compiler.DefaultImage(info)
			w := cmd.OutOrStdout()
			// Both forms say the same: the commit is "unknown" in each
			// when the build does not know it.
			commit := info.Commit
			if commit == "" {
				commit = "unknown"
			}
			if output == "json" {
				return writeJSON(w, struct {
					Version     string `json:"version"`
					Commit      string `json:"commit"`
					GoVersion   string `json:"goVersion"`
					Image       string `json:"image"`
					ImageDigest string `json:"imageDigest,omitempty"`
				}{info.Version, commit, info.GoVersion, image, info.ImageDigest})
			}
			fmt.Fprintf(w, "knc %s\ncommit: %s\ngo: %s\nimage: %s\n", info.Version, commit, info.GoVersion, image)
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output `FORMAT`: text or json")
	return cmd
}
