package kubetest

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// KubeConfig renders cfg as a kubeconfig file's content, for tests that run
// a command line as the admin or as a ServiceAccount. Only the server, its
// CA and the credentials (client certificate or bearer token) are carried
// over.
func KubeConfig(cfg *rest.Config) ([]byte, error) {
	const name = "kubetest"
	kc := clientcmdapi.NewConfig()
	kc.Clusters[name] = &clientcmdapi.Cluster{
		Server:                   cfg.Host,
		CertificateAuthorityData: cfg.CAData,
		TLSServerName:            cfg.ServerName,
	}
	kc.AuthInfos[name] = &clientcmdapi.AuthInfo{
		ClientCertificateData: cfg.CertData,
		ClientKeyData:         cfg.KeyData,
		Token:                 cfg.BearerToken,
	}
	kc.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name}
	kc.CurrentContext = name
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return nil, fmt.Errorf("kubetest: writing kubeconfig: %w", err)
	}
	return data, nil
}
