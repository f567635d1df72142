package cli

import (
	"bufio"
	"os"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/internal/version"
	"github.com/knc-dev/knc/plugins"
)

func newBuildCmd() *cobra.Command {
	var (
		flags  loadFlags
		output string
		image  string
		argoCD string
	)
	cmd := &cobra.Command{
		Use:   "build [PATH...] [-o DIR]",
		Short: "Compile Knative Eventing manifests into a kustomize directory",
		Long: `Build validates the manifests as 'knc validate' does, then compiles them
into a kustomize directory that Flux or Argo CD applies:

  DIR/kustomization.yaml       lists the directories below
  DIR/crds/                    the CRDs of Broker, Trigger, Channel, Subscription
  DIR/cluster/                 cluster-wide objects: admission policy, roles
  DIR/namespaces/NAMESPACE/    one kustomization per namespace: its Knative
                               objects normalised, its other objects, and
                               the runtime that serves its Brokers and Channels
  DIR/routing-table.json       the routing table, for 'knc run --table'

Each directory is a kustomization of its own, so a Flux Kustomization or an
Argo CD Application can point at one namespace, or at the root for all.

Invalid manifests are reported as by 'knc validate', with exit code 1, and
nothing is written. DIR is replaced as a whole, atomically: a failed build
leaves it as it was, and files a build no longer produces disappear. DIR
must be new, empty, or the output of a previous build (knc writes a
.knc-output marker into it, which also keeps knc from reading it back as
input).

Without -o, the objects are printed to standard output as one YAML stream,
in the order kustomize would apply them. -o yaml and -o json are refused
unless a directory of that name exists: write -o ./yaml to mean one.

A kustomization (a directory with kustomization.yaml, kustomization.yml or
Kustomization) is rendered as Flux renders it, and what it renders is
built. Each kustomization that no other includes is a deploy unit, and so
are the plain files outside every kustomization. When the paths hold
several units with Knative objects, -o DIR writes each into a subdirectory
named after its kustomization's directory, relative to the current
directory (DIR/apps/staging; the plain files go to DIR/_plain), each a
complete kustomize directory for a Flux Kustomization or an Argo CD
Application of its own; units with no Knative object are not built (-v
lists them). With one such unit the layout above is unchanged. Without
-o, several units are refused: give the overlay to build. PATH - reads a
YAML stream from standard input.

Project plugins in CUE (.knc/plugins) render the Brokers and Channels of
their class. Each CUE evaluation, of a .cue manifest, a plugin or the
policies, is bounded by --cue-timeout and --cue-memory: one that goes over
is stopped with an error naming the file or plugin (exit 1), and nothing
is written.

The runtime's image is --image, else runtime.image in knc.yaml, else the
image of this knc's release, pinned to its digest when the release build
knows it (REPO:VERSION@sha256:DIGEST). A knc that is not a release has no
image of its own: it writes REPO:latest and warns, and --strict refuses
that. The objects knc generates carry the label app.kubernetes.io/version.`,
		Example: `  # Build the current directory into deploy/.
  knc build -o deploy

  # Print what would be applied, for a quick look or a pipe.
  knc build eventing/ | kubectl apply --dry-run=server -f -

  # Build one overlay of a kustomize layout.
  knc build apps/production -o deploy/production

  # Build every overlay, each into deploy/<overlay directory>.
  knc build . -o deploy

  # Build what another tool renders.
  kustomize build apps/production | knc build - -o deploy/production

  # Use a pinned runtime image.
  knc build -o deploy --image ghcr.io/knc-dev/knc:v0.3.0`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutputDir(output); err != nil {
				return err
			}
			// One stream of several units would apply each unit's
			// objects over the others'.
			sel := compiler.OneUnit
			if output != "" {
				sel = compiler.EachUnit
			}
			res, err := flags.compile(cmd.Context(), args, compiler.Options{Select: sel, Command: "build", Render: &compiler.RenderOptions{
				Image:    image,
				Version:  version.Get(),
				Backends: plugins.Backends,
			}})
			if res == nil {
				return err
			}
			printDiagnostics(cmd.ErrOrStderr(), res.Diagnostics)
			if !res.Valid() {
				return silentExit(exitFailed)
			}
			if err != nil {
				return err
			}
			if len(res.Later) > 0 {
				printDiagnostics(cmd.ErrOrStderr(), res.Later)
				return silentExit(exitFailed)
			}
			out := res.Output
			if warnings := out.Warnings; len(warnings) > 0 {
				if flags.strict {
					warnings = warnings.Strict()
				}
				printDiagnostics(cmd.ErrOrStderr(), warnings.Sorted())
				if warnings.HasErrors() {
					return silentExit(exitFailed)
				}
			}
			if argoCD != "" {
				if err := writeArgoCDHealth(argoCD); err != nil {
					return &exitError{code: exitTrouble, err: err}
				}
			}
			if output == "" {
				w := bufio.NewWriter(cmd.OutOrStdout())
				if err := out.Stream(w); err != nil {
					return &exitError{code: exitTrouble, err: err}
				}
				if err := w.Flush(); err != nil {
					return &exitError{code: exitTrouble, err: err}
				}
				return nil
			}
			if err := out.Write(output); err != nil {
				return &exitError{code: exitTrouble, err: err}
			}
			return nil
		},
	}
	flags.register(cmd)
	flags.registerPolicies(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "", "write the kustomize directory to `DIR` (default: print the objects to standard output)")
	cmd.Flags().StringVar(&argoCD, "argocd-health", "", "also write to `FILE` the argocd-cm patch with Argo CD health checks for the four kinds")
	cmd.Flags().StringVar(&image, "image", "", "runtime container `IMAGE` (default: runtime.image in knc.yaml, else this release's "+compiler.ImageRepository+":VERSION@DIGEST)")
	return cmd
}

// checkOutputDir refuses -o yaml and -o json when no such directory exists:
// other tools take -o for a format, and knc build would otherwise quietly
// create a directory of that name.
func checkOutputDir(output string) error {
	if output != "yaml" && output != "json" {
		return nil
	}
	if info, err := os.Stat(output); err == nil && info.IsDir() {
		return nil
	}
	return usageError("-o %s: knc build writes a kustomize directory with -o DIR, and has no output format; to stream the objects as YAML to standard output, leave -o out (knc build PATH); to write a directory called %s, give -o ./%s", output, output, output)
}

// writeArgoCDHealth writes the argocd-cm patch holding knc's health checks.
func writeArgoCDHealth(file string) error {
	data, err := compiler.ArgoCDHealth("argocd")
	if err != nil {
		return err
	}
	return os.WriteFile(file, data, 0o644)
}
