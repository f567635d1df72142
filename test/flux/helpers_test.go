package flux

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"

	"github.com/knc-dev/knc/internal/kubetest"
)

// poll calls f until it returns nil, and fails the test with its last
// error when ctx ends or timeout has passed.
func poll(t testing.TB, ctx context.Context, timeout time.Duration, f func() error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		err := f()
		if err == nil {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("gave up waiting: %v", err)
		case <-tick.C:
		}
	}
}

func condition(u *unstructured.Unstructured, condType string) map[string]any {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == condType {
			return m
		}
	}
	return nil
}

// mountedTable stands in for the kubelet's ConfigMap volume: dir/table.json
// is a symlink into dir/..data, which update swaps atomically.
type mountedTable struct {
	dir string
	n   int
}

func (m *mountedTable) path() string { return filepath.Join(m.dir, "table.json") }

func (m *mountedTable) update(data []byte) error {
	m.n++
	version := fmt.Sprintf("..%d", m.n)
	if err := os.MkdirAll(filepath.Join(m.dir, version), 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(m.dir, version, "table.json"), data, 0o644); err != nil {
		return err
	}
	tmp := filepath.Join(m.dir, "..data_tmp")
	if err := os.Symlink(version, tmp); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(m.dir, "..data")); err != nil {
		return err
	}
	if m.n == 1 {
		return os.Symlink(filepath.Join("..data", "table.json"), m.path())
	}
	return nil
}

// runtimeProcess is one `knc runtime` subprocess.
type runtimeProcess struct {
	cmd  *exec.Cmd
	url  string
	logs *syncBuffer
	done chan error
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

var readyLine = regexp.MustCompile(`knc: serving namespaces .* on (http://\S+)`)

// reloads counts the routing tables the runtime reloaded from its file
// after the first, from the line it logs for each.
func (p *runtimeProcess) reloads() int {
	return strings.Count(p.logs.String(), `msg="reloaded the routing table" path=`)
}

// startRuntime runs knc runtime for namespace ns as cfg (a ServiceAccount's
// token), reading its routing table from table.
func startRuntime(t testing.TB, cfg *rest.Config, ns string, table *mountedTable) *runtimeProcess {
	t.Helper()
	kubeconfig, err := kubetest.KubeConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	p := &runtimeProcess{logs: &syncBuffer{}, done: make(chan error, 1)}
	p.cmd = exec.Command(kncBinary, "runtime",
		"--kubeconfig", kcPath,
		"--namespace", ns,
		"--table", table.path(),
		"--table-poll-interval", "100ms",
		"--http-addr", "127.0.0.1:0",
		"--data-dir", filepath.Join(dir, "data"),
		"--shutdown-timeout", "3s",
	)
	stderr, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			fmt.Fprintln(p.logs, line)
			if m := readyLine.FindStringSubmatch(line); m != nil {
				urls <- m[1]
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-p.done:
			if err != nil {
				t.Errorf("knc runtime exited with %v", err)
			}
		case <-time.After(20 * time.Second):
			_ = p.cmd.Process.Kill()
			t.Error("knc runtime did not stop within 20s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("knc runtime logs:\n%s", p.logs.String())
		}
	})
	select {
	case p.url = <-urls:
	case err := <-p.done:
		t.Fatalf("knc runtime exited before it was ready: %v\n%s", err, p.logs.String())
	case <-time.After(time.Minute):
		t.Fatalf("knc runtime not ready within a minute:\n%s", p.logs.String())
	}
	return p
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
	poll(t, t.Context(), time.Minute, func() error {
		if s.received(path, id) {
			return nil
		}
		return fmt.Errorf("event %s not delivered to %s", id, path)
	})
}
