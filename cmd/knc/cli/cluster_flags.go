package cli

import (
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/compiler/live"
)

// clusterFlags say which cluster a command reads, as kubectl's do.
type clusterFlags struct {
	kubeconfig string
	context    string
}

func (f *clusterFlags) register(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig `FILE` (default: $KUBECONFIG, else ~/.kube/config)")
	fl.StringVar(&f.context, "context", "", "kubeconfig `CONTEXT` to use (default: the current context)")
}

// connect reaches the cluster; a kubeconfig that does not load is trouble
// (exit 2).
func (f *clusterFlags) connect() (*live.Cluster, error) {
	c, err := live.Connect(live.ConnectOptions{Kubeconfig: f.kubeconfig, Context: f.context})
	if err != nil {
		return nil, &exitError{code: exitTrouble, err: err}
	}
	return c, nil
}
