package flux

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

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

// sink is a real HTTP subscriber on loopback that records the ids of the
// events it receives, by path.
type sink struct {
	mu  sync.Mutex
	ids map[string]map[string]int // path → id → deliveries
	url string
}

func newSink(t testing.TB) *sink {
	t.Helper()
	s := &sink{ids: map[string]map[string]int{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		if s.ids[r.URL.Path] == nil {
			s.ids[r.URL.Path] = map[string]int{}
		}
		s.ids[r.URL.Path][r.Header.Get("Ce-Id")]++
		s.mu.Unlock()
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL
	return s
}

func (s *sink) received(path, id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[path][id] > 0
}

func (s *sink) waitFor(t testing.TB, path, id string) {
	t.Helper()
	rig.Poll(t, t.Context(), time.Minute, func() error {
		if s.received(path, id) {
			return nil
		}
		return fmt.Errorf("event %s not delivered to %s", id, path)
	})
}
