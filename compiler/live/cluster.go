package live

import (
	"fmt"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/knc-dev/knc/internal/restmap"
)

// Client throttling. client-go's defaults (5 requests a second, bursts of
// 10) would make a status of many kinds in many namespaces wait on the
// limiter rather than on the API server; these stay well below what an API
// server's priority and fairness lets one client have.
const (
	DefaultQPS   = 50
	DefaultBurst = 100
)

// ConnectOptions say which cluster to reach, as kubectl's flags do.
type ConnectOptions struct {
	// Kubeconfig is the file to read; "" follows client-go's loading
	// rules: $KUBECONFIG, else ~/.kube/config, else the in-cluster
	// config.
	Kubeconfig string
	// Context is the kubeconfig context to use; "" is the current one.
	Context string
	// QPS and Burst throttle the client; 0 is DefaultQPS and
	// DefaultBurst.
	QPS   float32
	Burst int
}

// Cluster is a connection to one cluster.
type Cluster struct {
	// Context names the kubeconfig context, for headings; "" when the
	// config came from elsewhere.
	Context string
	// Namespace is the context's namespace, "default" when it sets none.
	Namespace string
	Config    *rest.Config
	Dynamic   dynamic.Interface
	// Mapper maps kinds to resources from the API server's discovery
	// documents, read as each group version is first needed.
	Mapper *restmap.Mapper
}

// Connect loads the kubeconfig as kubectl does and makes the clients.
func Connect(opts ConnectOptions) (*Cluster, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = opts.Kubeconfig
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: opts.Context})
	cfg, err := loader.ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	ns, _, err := loader.Namespace()
	if err != nil {
		return nil, fmt.Errorf("loading the kubeconfig: %w", err)
	}
	c := &Cluster{Namespace: ns, Context: opts.Context}
	if c.Context == "" {
		if raw, err := loader.RawConfig(); err == nil {
			c.Context = raw.CurrentContext
		}
	}
	return c, c.init(cfg, opts)
}

// NewCluster makes the clients for cfg: for tests and programs that hold a
// rest.Config already.
func NewCluster(cfg *rest.Config, opts ConnectOptions) (*Cluster, error) {
	c := &Cluster{Namespace: "default", Context: opts.Context}
	return c, c.init(cfg, opts)
}

func (c *Cluster) init(cfg *rest.Config, opts ConnectOptions) error {
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = opts.QPS, opts.Burst
	if cfg.QPS == 0 {
		cfg.QPS = DefaultQPS
	}
	if cfg.Burst == 0 {
		cfg.Burst = DefaultBurst
	}
	cfg.UserAgent = "knc"
	// One HTTP client, so that objects and discovery documents share its
	// connections.
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return err
	}
	dyn, err := dynamic.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return err
	}
	mapper, err := restmap.NewForConfigAndClient(cfg, httpClient)
	if err != nil {
		return err
	}
	c.Config = cfg
	c.Dynamic = dyn
	c.Mapper = mapper
	return nil
}
