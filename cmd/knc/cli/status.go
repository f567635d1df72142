package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/live"
)

type statusFlags struct {
	load          loadFlags
	cluster       clusterFlags
	namespace     string
	allNamespaces bool
	output        string
	watch         bool
}

func newStatusCmd() *cobra.Command {
	var f statusFlags
	cmd := &cobra.Command{
		Use:   "status [PATH...] | -n NAMESPACE | -A",
		Short: "Show whether the Knative objects in the cluster are Ready, and why not",
		Long: `Status reads the Knative objects from the cluster of the current kubeconfig
context and prints them as a tree: each Broker with its Triggers, each
Channel with its Subscriptions, then Sequences, Parallels and sources, with
their Ready condition, its reason, their age, and the address of what is
ready or the message of what is not.

With PATHs (default: the current directory), the objects are those of the
repository's build, as knc build compiles them: an object the build has
and the cluster lacks is shown as Missing. With -n NAMESPACE, they are
the Knative objects of that namespace; with -A, of every namespace.

The cluster is the one kubectl would talk to: --kubeconfig, else
$KUBECONFIG, else ~/.kube/config, at --context or the current context.
The objects are read with one list request per kind and namespace.

With --watch, the status is printed again each time it changes, until
knc is interrupted (Ctrl-C); the exit code is then the last status's.

The exit code is 0 when every object is Ready, 1 when one is not (or is
missing), and 2 on trouble: a usage error, a kubeconfig that does not
load, a cluster that cannot be read, or manifests that do not validate.`,
		Example: `  # Is everything of this repository Ready in the cluster?
  knc status

  # The Knative objects of one namespace, or of all of them.
  knc status -n shop
  knc status -A

  # Follow a rollout until Ctrl-C.
  knc status --watch eventing/

  # For a script: which objects are not Ready, and why?
  knc status -A -o json | jq '.objects[] | select(.ready != "True")'`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "text", "json", "yaml"); err != nil {
				return err
			}
			if (f.namespace != "" || f.allNamespaces) && len(args) > 0 {
				return usageError("give PATHs (the objects of a build) or -n/-A (the objects of namespaces), not both")
			}
			if f.namespace != "" && f.allNamespaces {
				return usageError("give -n NAMESPACE or -A, not both")
			}
			return runStatus(cmd, &f, args)
		},
	}
	f.load.register(cmd)
	f.cluster.register(cmd)
	fl := cmd.Flags()
	fl.StringVarP(&f.namespace, "namespace", "n", "", "show the Knative objects of `NAMESPACE`")
	fl.BoolVarP(&f.allNamespaces, "all-namespaces", "A", false, "show the Knative objects of every namespace")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text, json or yaml")
	fl.BoolVarP(&f.watch, "watch", "w", false, "print the status again each time it changes, until interrupted")
	return cmd
}

func runStatus(cmd *cobra.Command, f *statusFlags, args []string) error {
	scope := live.Scope{AllNamespaces: f.allNamespaces}
	if f.namespace != "" {
		scope.Namespaces = []string{f.namespace}
	}
	if !f.allNamespaces && f.namespace == "" {
		built, err := buildScope(cmd, &f.load, args)
		if err != nil {
			return err
		}
		scope = built
	}
	c, err := f.cluster.connect()
	if err != nil {
		return err
	}
	stdout := cmd.OutOrStdout()
	if f.watch {
		var last *live.Status
		err := live.WatchStatus(cmd.Context(), c, scope, func(st *live.Status) error {
			if last != nil && f.output == "text" {
				fmt.Fprintln(stdout)
			}
			last = st
			return writeStatus(stdout, f.output, st)
		})
		if err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
		if last == nil {
			// Interrupted before the first status.
			return silentExit(exitTrouble)
		}
		return statusExit(last)
	}
	st, err := live.ReadStatus(cmd.Context(), c, scope)
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	if err := writeStatus(stdout, f.output, st); err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	return statusExit(st)
}

func statusExit(st *live.Status) error {
	if !st.Ready {
		return silentExit(exitFailed)
	}
	return nil
}

func writeStatus(w io.Writer, format string, st *live.Status) error {
	switch format {
	case "json":
		return writeJSON(w, st)
	case "yaml":
		data, err := yaml.Marshal(st)
		if err != nil {
			return err
		}
		if _, err := fmt.Fprintln(w, "---"); err != nil {
			return err
		}
		_, err = w.Write(data)
		return err
	}
	return st.WriteText(w, time.Now())
}

// buildScope compiles the repository at paths and names its Knative
// objects, whose status is read. Manifests that do not validate are
// trouble: what they would deploy is unknown.
func buildScope(cmd *cobra.Command, f *loadFlags, paths []string) (live.Scope, error) {
	res, err := f.compile(cmd.Context(), paths, compiler.Options{})
	if res == nil {
		return live.Scope{}, err
	}
	if !res.Valid() {
		stderr := cmd.ErrOrStderr()
		fmt.Fprintln(stderr, "knc: the manifests do not validate:")
		printDiagnostics(stderr, res.Diagnostics)
		return live.Scope{}, silentExit(exitTrouble)
	}
	if err != nil {
		return live.Scope{}, err
	}
	return live.BuildScope(res), nil
}
