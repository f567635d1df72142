package flux

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"k8s.io/client-go/rest"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/test/rig"
)

// startRuntime runs knc runtime for namespace ns as cfg (a ServiceAccount's
// token), reading its routing table from table.
func startRuntime(t testing.TB, cfg *rest.Config, ns string, table *rig.MountedTable) *rig.ClusterRuntime {
	t.Helper()
	kubeconfig, err := kubetest.KubeConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rig.StartClusterRuntime(t, kncBinary, kubeconfig, ns, table.Path())
}

// post sends a binary-mode CloudEvent to url and returns the status code,
// or 0 when no answer came.
func post(ctx context.Context, url, id, eventType string) int {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(`{"n":1}`))
	if err != nil {
		return 0
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Ce-Specversion", "1.0")
	req.Header.Set("Ce-Id", id)
	req.Header.Set("Ce-Source", "test/flux")
	req.Header.Set("Ce-Type", eventType)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0
	}
	_ = resp.Body.Close()
	return resp.StatusCode
}
