package rig

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// MountedTable stands in for the kubelet's ConfigMap volume of the routing
// table: Path is a symlink into ..data, which Update swaps atomically, as
// the kubelet does, so that a reader never sees half a table.
type MountedTable struct {
	dir      string
	versions int
}

// NewMountedTable mounts nothing yet; the first Update creates Path.
func NewMountedTable(dir string) *MountedTable { return &MountedTable{dir: dir} }

// Path is the file knc runtime's --table reads.
func (m *MountedTable) Path() string { return filepath.Join(m.dir, "table.json") }

// Update writes data as the ConfigMap's new content.
func (m *MountedTable) Update(data []byte) error {
	m.versions++
	version := fmt.Sprintf("..%d", m.versions)
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
	if m.versions == 1 {
		return os.Symlink(filepath.Join("..data", "table.json"), m.Path())
	}
	return nil
}

// ClusterRuntime is one `knc runtime` process serving a namespace of a
// real API server, as the Deployment knc build writes would, without a
// kubelet.
type ClusterRuntime struct {
	// URL is the ingress listener's base URL.
	URL string
	// AdminURL is the admin listener's: /status, /metrics and /ui.
	AdminURL string
	cmd      *exec.Cmd
	logs     *lineLog
	reloads  atomic.Int64
	done     chan error
}

var clusterReadyLine = regexp.MustCompile(`knc: serving namespaces .* on (http://\S+)`)

// clusterAdminLine is the line knc runtime prints next, naming its admin
// listener.
var clusterAdminLine = regexp.MustCompile(`live page at (http://\S+)/ui`)

// StartClusterRuntime runs the runtime's binary knc-runtime, or knc
// runtime when bin is knc, for namespace ns with the
// credentials of kubeconfig, reading its routing table from tablePath, and
// waits until it serves. Both listeners take free loopback ports; args
// come after knc's own flags, so they win. The process is stopped with
// SIGTERM when the test ends, and its logs are printed if the test failed.
func StartClusterRuntime(t testing.TB, bin string, kubeconfig []byte, ns, tablePath string, args ...string) *ClusterRuntime {
	t.Helper()
	dir := t.TempDir()
	kcPath := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kcPath, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	r := &ClusterRuntime{done: make(chan error, 1)}
	var args0 []string
	if filepath.Base(bin) != "knc-runtime" {
		// knc, whose command the runtime is.
		args0 = []string{"runtime"}
	}
	r.cmd = exec.Command(bin, append(args0,
		"--kubeconfig", kcPath,
		"--namespace", ns,
		"--table", tablePath,
		"--table-poll-interval", "100ms",
		"--http-addr", "127.0.0.1:0",
		"--admin-addr", "127.0.0.1:0",
		"--data-dir", filepath.Join(dir, "data"),
		"--shutdown-timeout", "3s",
		"--log-level", "debug",
	)...)
	r.cmd.Args = append(r.cmd.Args, args...)
	stderr, err := r.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	urls := make(chan string, 1)
	admins := make(chan string, 1)
	r.logs = &lineLog{watch: func(line string) {
		if m := clusterReadyLine.FindStringSubmatch(line); m != nil {
			urls <- m[1]
		}
		if m := clusterAdminLine.FindStringSubmatch(line); m != nil {
			admins <- m[1]
		}
		if strings.Contains(line, clusterReloadLine) {
			r.reloads.Add(1)
		}
	}}
	go func() {
		r.logs.consume(stderr)
		_, _ = io.Copy(io.Discard, stderr)
		r.done <- r.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = r.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case err := <-r.done:
			if err != nil {
				t.Errorf("knc runtime exited with %v", err)
			}
		case <-time.After(20 * time.Second):
			_ = r.cmd.Process.Kill()
			t.Error("knc runtime did not stop within 20s of SIGTERM")
		}
		if t.Failed() {
			t.Logf("knc runtime logs:\n%s", r.logs.String())
		}
	})
	for r.URL == "" || r.AdminURL == "" {
		select {
		case r.URL = <-urls:
		case r.AdminURL = <-admins:
		case err := <-r.done:
			t.Fatalf("knc runtime exited before it was ready: %v\n%s", err, r.logs.String())
		case <-time.After(time.Minute):
			t.Fatalf("knc runtime not ready within a minute:\n%s", r.logs.String())
		}
	}
	return r
}

// PID is the runtime's process ID.
func (r *ClusterRuntime) PID() int { return r.cmd.Process.Pid }

// Logs is what the runtime has written to stderr so far.
func (r *ClusterRuntime) Logs() string { return r.logs.String() }

// Reloads counts the routing tables the runtime reloaded from its file
// after the first, from the line it logs for each.
func (r *ClusterRuntime) Reloads() int { return int(r.reloads.Load()) }

const clusterReloadLine = `msg="reloaded the routing table" path=`
