package cli

import (
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
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
		Long: `Validate checks Brokers, Triggers, Channels and Subscriptions as Knative
Eventing's admission does, and across the whole set: duplicate objects,
references that do not resolve, and events that loop without end.

An error means the cluster would refuse the manifest: the API server and
Knative's webhooks, with the feature flags under features in knc.yaml
(Knative's defaults otherwise), refuse exactly what validate reports as an
error. Objects of Knative's API groups must name a kind and version the
group serves ("kind: Triger" is an error that suggests Trigger).

The rules are stated in knc's CUE schemas (knc schema); validate runs Go
checks that mirror them, kept in line by a differential test.

Warnings are checks where knc is stricter than Knative on purpose, because
the object would be admitted but would not do what was meant: a filter
entry with no dialect with content (it matches every event), an empty
dialect beside one with content, a broker or reference name no object can
have, a ref beside a uri that is incomplete, CACerts beside a ref alone
that are not a certificate, a negative backoffDelay or timeout, a Trigger's
brokerRef (knc routes by spec.broker), an empty Subscription reply, and a
value knc would not write in a status (the API server drops it; a status
Knative cannot decode is an error).

PATH is a file or a directory, walked recursively; the default is the current
directory; - reads a YAML stream from standard input. YAML (multi-document
streams included), JSON and CUE files are read. Other Kubernetes objects in
the set are loaded as reference targets. Files none of whose documents has
apiVersion and kind (tool and CI configuration), hidden files and
directories, and Helm charts (a directory with Chart.yaml: pipe helm
template into knc validate - instead) are passed over; -v lists them.

A directory with kustomization.yaml, kustomization.yml or Kustomization is
rendered as Flux renders it, offline, and the rendered objects are checked;
errors point at the file and line an object or field came from, naming the
patch that set it. Each kustomization no other one includes is a deploy
unit, and so are the plain files outside every kustomization: references,
duplicates and loops are checked within a unit, so overlays for two
clusters may define the same objects. A path that holds no Knative object
is a warning.

A team's own rules are CUE policies: the .cue files in .knc/policies beside
knc.yaml, and in each directory given with --policies. Every object of a
deploy unit is checked against each policy that matches it (by kind,
namespace or labels); a violation is reported at the object's field, with
the policy's name and message, as an error or a warning as the policy says.
See 'knc schema' for the shape of a policy file.

Every CUE evaluation (each .cue manifest, and the policies) is bounded: one
that runs longer than --cue-timeout, or grows memory by more than
--cue-memory, is stopped with an error naming the file or policy (exit 1).

Errors are printed on stderr as FILE:LINE:COL: FIELD.PATH: MESSAGE, sorted,
each once. Checks where knc is stricter than Knative's admission on purpose
are warnings, printed as FILE:LINE:COL: warning: FIELD.PATH: MESSAGE; they
leave the exit code at 0 unless --strict is given. The exit code is 0 when
the manifests are valid, 1 when they are not, and 2 on a usage or I/O error.`,
		Example: `  # Validate the current directory.
  knc validate

  # Validate two directories, skipping generated files.
  knc validate eventing/ team-a/ --exclude 'team-a/generated'

  # Check what kustomize or helm renders.
  kustomize build apps/production | knc validate -

  # Annotate a pull request from GitHub Actions.
  knc validate -o github

  # Also apply the platform team's policies, checked out beside the app.
  knc validate --policies ../platform/policies

  # Fail on warnings too.
  knc validate --strict`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "text", "json", "github"); err != nil {
				return err
			}
			res, err := flags.compile(cmd.Context(), args, compiler.Options{})
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
				if err := writeJSON(cmd.OutOrStdout(), validateReport(res.Set.Read(), res.Diagnostics)); err != nil {
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
	flags.registerPolicies(cmd)
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
