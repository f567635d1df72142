package command

import (
	"errors"
	"fmt"
	"os"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeConfig is where the runtime's Kubernetes client configuration came
// from, for the line it logs at start-up.
type kubeConfig struct {
	rest *rest.Config
	// source is "in-cluster" or the kubeconfig file(s) read.
	source string
	// context is the kubeconfig context used; empty in-cluster.
	context string
	// namespace is the context's namespace, if it names one.
	namespace string
}

// loadKubeConfig follows kubectl's rules: --kubeconfig, else $KUBECONFIG,
// else ~/.kube/config, with --context choosing among the file's contexts.
// In a pod (KUBERNETES_SERVICE_HOST set, as the kubelet does) with none of
// --kubeconfig, $KUBECONFIG or --context given, the in-cluster
// configuration is used, so that a kubeconfig lying in the image's home
// directory can never redirect the generated Deployment.
func loadKubeConfig(explicitPath, context string) (*kubeConfig, error) {
	inPod := os.Getenv("KUBERNETES_SERVICE_HOST") != ""
	if inPod && explicitPath == "" && context == "" && os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "" {
		cfg, err := rest.InClusterConfig()
		if err != nil {
			return nil, err
		}
		return &kubeConfig{rest: cfg, source: "in-cluster"}, nil
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = explicitPath
	// The default rules fall back to the in-cluster configuration when no
	// file is found; outside a pod that fallback can only fail with a
	// message about service-account files, which says less than "no
	// kubeconfig".
	overrides := &clientcmd.ConfigOverrides{CurrentContext: context}
	loader := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, overrides)
	raw, err := loader.RawConfig()
	if err != nil {
		return nil, err
	}
	files := rules.GetLoadingPrecedence()
	if explicitPath != "" {
		files = []string{explicitPath}
	}
	if len(raw.Contexts) == 0 && !inPod {
		return nil, fmt.Errorf("no kubeconfig with a context in %v: pass --kubeconfig, set $KUBECONFIG, or run `kubectl config` (kind and k3d write ~/.kube/config)", files)
	}
	cfg, err := loader.ClientConfig()
	if err != nil {
		if clientcmd.IsEmptyConfig(err) {
			err = errors.Join(err, errors.New("pass --kubeconfig or set $KUBECONFIG"))
		}
		return nil, err
	}
	kc := &kubeConfig{rest: cfg, source: fmt.Sprint(files)}
	current := raw.CurrentContext
	if context != "" {
		current = context
	}
	kc.context = current
	if c, ok := raw.Contexts[current]; ok {
		kc.namespace = c.Namespace
	}
	return kc, nil
}
