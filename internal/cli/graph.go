package cli

import (
	"bufio"
	"io"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/routes"
)

func newGraphCmd() *cobra.Command {
	var (
		flags  loadFlags
		output string
	)
	cmd := &cobra.Command{
		Use:   "graph [PATH...]",
		Short: "Draw the event topology: Brokers, Channels, Triggers, Subscriptions and where they deliver",
		Long: `Graph draws the topology of the manifests: each Broker with its Triggers
and each Channel with its Subscriptions, and the subscribers, replies and
dead-letter sinks they deliver to, grouped by namespace. A Trigger's box
shows its filter as one expression.

The manifests are validated first, as by 'knc validate'; invalid manifests
are reported on stderr with exit code 1.

Formats (-o):
  mermaid  a Mermaid flowchart (the default), which GitHub and GitLab draw
           in Markdown inside a mermaid code block
  dot      a Graphviz digraph, for 'dot -Tpng'
  svg      a standalone SVG image, laid out by knc itself

The output is deterministic: the same manifests give the same bytes.`,
		Example: `  # Paste the topology into a pull request or a README.
  knc graph eventing/ > topology.mmd

  # An image, without any other tool.
  knc graph -o svg > topology.svg

  # Through Graphviz.
  knc graph -o dot | dot -Tpng > topology.png`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "mermaid", "dot", "svg", "png"); err != nil {
				return err
			}
			g, err := loadGraph(cmd, &flags, args)
			if err != nil {
				return err
			}
			return writeGraph(cmd.OutOrStdout(), output, g)
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "mermaid", "output format: mermaid, dot or svg")
	return cmd
}

// loadGraph loads and checks the manifests, reporting invalid ones as
// validate does, and draws their topology.
func loadGraph(cmd *cobra.Command, flags *loadFlags, args []string) (*graph.Graph, error) {
	res, err := flags.load(args)
	if err != nil {
		return nil, err
	}
	if !res.Valid() {
		printDiagnostics(cmd.ErrOrStderr(), res.Diagnostics)
		return nil, silentExit(exitFailed)
	}
	if res, err = singleUnit(res, "graph"); err != nil {
		return nil, err
	}
	g, diags := buildGraph(res)
	if len(diags) > 0 {
		printDiagnostics(cmd.ErrOrStderr(), diags)
		return nil, silentExit(exitFailed)
	}
	return g, nil
}

func buildGraph(res *compiler.Result) (*graph.Graph, diag.List) {
	table, diags := routes.Compile(res.Set, res.Config)
	if len(diags) > 0 {
		return nil, diags.Sorted()
	}
	return graph.Build(res.Set, table), nil
}

func writeGraph(w io.Writer, format string, g *graph.Graph) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "dot":
		err = graph.WriteDOT(bw, g)
	case "svg":
		err = graph.WriteSVG(bw, g)
	case "png":
		err = graph.WritePNG(bw, g)
	default:
		err = graph.WriteMermaid(bw, g)
	}
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	return nil
}
