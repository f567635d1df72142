package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/drawing"
)

func newGraphCmd() *cobra.Command {
	var (
		flags  loadFlags
		output string
		sel    topology.Selection
		// layoutTimeout bounds the layout of -o svg and -o png.
		layoutTimeout time.Duration
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
  svg      a standalone SVG image, laid out by Graphviz's dot, which runs
           inside knc: no other tool is needed
  png      the same drawing as a PNG image

Each namespace is a box; in it each Broker or Channel and its Triggers or
Subscriptions share a shaded box. Replies are drawn blue and bold,
dead-letter deliveries orange and dashed; the legend says so too.

A large topology can be drawn one piece at a time:
  --namespace NS      the Brokers and Channels of these namespaces
  --broker NAME       these Brokers (NAME or NAMESPACE/NAME) and their
                      Triggers
  --focus KIND/NS/NAME --depth N
                      one node and what lies within N deliveries of it,
                      either way (a Trigger and its Broker count as one)
Each narrows the others. A namespace, Broker or focus that names nothing
is a usage error (exit code 2), with a near name suggested.

SVG and PNG drawings are laid out by Graphviz, whose time and memory grow
faster than the square of the graph: a topology of more than 2,000 nodes
or 4,000 edges is refused, and a layout that takes longer than
--layout-timeout, or that SIGINT or SIGTERM stops, ends knc (exit code 1).
Draw a part of it, or write mermaid or dot, which are not laid out.

The output is deterministic: the same manifests give the same bytes.`,
		Example: `  # Paste the topology into a pull request or a README.
  knc graph eventing/ > topology.mmd

  # An image, without any other tool.
  knc graph -o svg > topology.svg

  # A PNG, for a chat message or a slide.
  knc graph -o png > topology.png

  # One Broker of a large repository.
  knc graph --broker shop/orders -o svg > orders.svg

  # Who delivers to the billing Service, and what else they deliver to.
  knc graph --focus Service/shop/billing --depth 2

  # Through your own Graphviz.
  knc graph -o dot | dot -Tpdf > topology.pdf`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, "mermaid", "dot", "svg", "png"); err != nil {
				return err
			}
			if cmd.Flags().Changed("depth") && sel.Focus == "" {
				return usageError("--depth %d: give --focus KIND/NAMESPACE/NAME, whose neighbourhood --depth bounds", sel.Depth)
			}
			g, err := loadGraph(cmd, &flags, args)
			if err != nil {
				return err
			}
			if g, err = g.Select(sel); err != nil {
				if e, ok := errors.AsType[*topology.SelectionError](err); ok {
					return usageError("--%s %s: %s", e.Part, e.Value, e.Reason)
				}
				return err
			}
			if layoutTimeout <= 0 {
				return usageError("--layout-timeout %s: want a positive duration, such as 30s or 2m", layoutTimeout)
			}
			ctx, cancel := context.WithTimeoutCause(cmd.Context(), layoutTimeout,
				fmt.Errorf("it took longer than --layout-timeout %s", layoutTimeout))
			defer cancel()
			return writeGraph(ctx, cmd.OutOrStdout(), output, g)
		},
	}
	flags.register(cmd)
	cmd.Flags().StringVarP(&output, "output", "o", "mermaid", "output format: mermaid, dot, svg or png")
	cmd.Flags().StringSliceVar(&sel.Namespaces, "namespace", nil, "draw only the Brokers and Channels of these `namespaces` (repeatable or comma-separated)")
	cmd.Flags().StringSliceVar(&sel.Brokers, "broker", nil, "draw only these `Brokers`, each NAME or NAMESPACE/NAME (repeatable or comma-separated)")
	cmd.Flags().StringVar(&sel.Focus, "focus", "", "draw only the neighbourhood of this `node`, KIND/NAMESPACE/NAME such as Trigger/shop/orders")
	cmd.Flags().IntVar(&sel.Depth, "depth", 1, "how many deliveries, either way, the neighbourhood of --focus reaches")
	cmd.Flags().DurationVar(&layoutTimeout, "layout-timeout", time.Minute, "give up a layout for -o svg or -o png that takes longer than this `duration`")
	return cmd
}

// loadGraph loads and checks the manifests, reporting invalid ones as
// validate does, and draws their topology.
func loadGraph(cmd *cobra.Command, flags *loadFlags, args []string) (*topology.Graph, error) {
	res, err := flags.compile(cmd.Context(), args, compiler.Options{Select: compiler.OneUnit, Command: "graph", Routes: &compiler.RouteOptions{}})
	if res == nil {
		return nil, err
	}
	if !res.Valid() {
		printDiagnostics(cmd.ErrOrStderr(), res.Diagnostics)
		return nil, silentExit(exitFailed)
	}
	if err != nil {
		return nil, err
	}
	if len(res.Later) > 0 {
		printDiagnostics(cmd.ErrOrStderr(), res.Later)
		return nil, silentExit(exitFailed)
	}
	return graph.Build(res.Set, res.Table), nil
}

func writeGraph(ctx context.Context, w io.Writer, format string, g *topology.Graph) error {
	bw := bufio.NewWriter(w)
	var err error
	switch format {
	case "dot":
		err = topology.WriteDOT(bw, g)
	case "svg":
		err = drawing.WriteSVG(ctx, bw, g)
	case "png":
		err = drawing.WritePNG(ctx, bw, g)
	default:
		err = topology.WriteMermaid(bw, g)
	}
	if err == nil {
		err = bw.Flush()
	}
	switch {
	case errors.Is(err, topology.ErrTooLargeToLayOut), errors.Is(err, topology.ErrLayoutStopped):
		return &exitError{code: exitFailed, err: fmt.Errorf("%w; draw a part with --focus KIND/NAMESPACE/NAME, --broker or --namespace, or write -o mermaid or -o dot, which are not laid out", err)}
	case err != nil:
		return &exitError{code: exitTrouble, err: err}
	}
	return nil
}
