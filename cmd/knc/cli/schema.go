package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/schema"
	policyschema "github.com/knc-dev/knc/schema/policy"
)

func newSchemaCmd() *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "schema [-o cue|openapi]",
		Short: "Print the schemas knc validates against",
		Long: `Schema prints knc's definitions of Broker, Trigger, Channel and
Subscription, of knc.yaml (#Config), and of policy files (#Policy).

With -o cue (the default) it prints the embedded CUE files in name order,
each introduced by a "// file: NAME" comment: the source of truth that
'knc validate' checks against. The definition of policy files,
policy/policy.cue, comes last: a policy file in .knc/policies (or in a
directory given to 'knc validate --policies') holds
policy: NAME: {match: {...}, constrain: {...}, severity: ..., message: ...}.

With -o openapi it prints an OpenAPI 3.0 document (JSON) whose
components.schemas hold the structural schemas of the four kinds, exactly
as the CRDs written by 'knc build' carry them: generated from the CUE, with
the rules OpenAPI can state and the CEL rules that keep immutable fields
unchanged.`,
		Example: `  # Read the definitions.
  knc schema | less

  # Read how policy files are written.
  knc schema | sed -n '/file: policy/,$p'

  # Feed the OpenAPI schemas to an editor or another validator.
  knc schema -o openapi > knative-eventing.openapi.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(output, "cue", "openapi"); err != nil {
				return err
			}
			w := cmd.OutOrStdout()
			if output == "openapi" {
				doc, err := compiler.OpenAPI()
				if err != nil {
					return &exitError{code: exitTrouble, err: err}
				}
				_, err = w.Write(doc)
				return err
			}
			names, files, err := schema.Files()
			if err != nil {
				return &exitError{code: exitTrouble, err: err}
			}
			names = append(names, policyschema.FileName)
			files[policyschema.FileName] = policyschema.Source
			for i, name := range names {
				if i > 0 {
					fmt.Fprintln(w)
				}
				fmt.Fprintf(w, "// file: %s\n", name)
				if _, err := w.Write(files[name]); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&output, "output", "o", "cue", "output format: cue or openapi")
	return cmd
}
