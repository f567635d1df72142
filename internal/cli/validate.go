package cli

import (
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler/diag"
)

func newValidateCmd() *cobra.Command {
	var (
		flags  loadFlags
		output string
		base   string
	)
	cmd := &cobra.Command{
		Use:   "validate [PATH...]",
		Short: "Check Knative Eventing manifests before they are merged",
		Long: `Validate checks Brokers, Triggers, Channels and Subscriptions against
knc's CUE schemas and across the whole set: duplicate objects, references
that do not resolve, features the cluster does not enable, and events that
loop without end.

PATH is a file or a directory, walked recursively; the default is the current
directory. YAML (multi-document streams included), JSON and CUE files are
read. Other Kubernetes objects in the set are loaded as reference targets.

Errors are printed on stderr as FILE:LINE:COL: FIELD.PATH: MESSAGE, sorted,
each once. Checks where knc is stricter than Knative's admission on purpose
are warnings, printed as FILE:LINE:COL: warning: FIELD.PATH: MESSAGE; they
leave the exit code at 0 unless --strict is given. The exit code is 0 when
the manifests are valid, 1 when they are not, and 2 on a usage or I/O error.`,
		Example: `  # Validate the current directory.
  knc validate

  # Validate two directories, skipping generated files.
  knc validate eventing/ team-a/ --exclude 'team-a/generated'

  # Annotate a pull request from GitHub Actions.
  knc validate -o github`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "text", "json", "github"); err != nil {
				return err
			}
			res, err := flags.load(args)
			if err != nil {
				return err
			}
			if base != "" {
				if err := addImmutableChanges(cmd, base, &flags, args, res); err != nil {
					return err
				}
			}
			switch output {
			case "json":
				if err := writeJSON(cmd.OutOrStdout(), validateReport(len(res.Set.Entries), res.Diagnostics)); err != nil {
					return err
				}
			case "github":
				printGitHubAnnotations(cmd.OutOrStdout(), res.Diagnostics)
			default:
				printDiagnostics(cmd.ErrOrStderr(), res.Diagnostics)
			}
			if !res.Valid() {
				return silentExit(exitFailed)
			}
			return nil
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "text", "output format: text, json or github")
	cmd.Flags().StringVar(&base, "base", "", "also report changes to immutable fields since this git revision (`GITREF`), as knc diff does")
	return cmd
}

type report struct {
	Valid    bool            `json:"valid"`
	Objects  int             `json:"objects"`
	Errors   []reportedError `json:"errors"`
	Warnings []reportedError `json:"warnings"`
}

type reportedError struct {
	File     string `json:"file"`
	Line     int    `json:"line"`
	Column   int    `json:"column"`
	Path     string `json:"path,omitempty"`
	Message  string `json:"message"`
	Severity string `json:"severity"`
}

func validateReport(objects int, diags diag.List) report {
	r := report{Valid: !diags.HasErrors(), Objects: objects, Errors: []reportedError{}, Warnings: []reportedError{}}
	for _, d := range diags {
		e := reportedError{File: d.Pos.File, Line: d.Pos.Line, Column: d.Pos.Column, Path: d.Path, Message: d.Message, Severity: d.Severity.String()}
		if d.Severity == diag.Warning {
			r.Warnings = append(r.Warnings, e)
		} else {
			r.Errors = append(r.Errors, e)
		}
	}
	return r
}
