package rig

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/routing"
)

// BuildKnc builds cmd/knc into dir and returns the binary's path. Call it
// once from TestMain.
func BuildKnc(dir string) (string, error) {
	bin := filepath.Join(dir, "knc")
	build := exec.Command("go", "build", "-o", bin, "github.com/knc-dev/knc/cmd/knc")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return "", fmt.Errorf("building knc: %w", err)
	}
	return bin, nil
}

// MainWithKnc builds cmd/knc into a temporary directory, stores its path
// in *bin, runs the tests and removes the directory. TestMain calls it as
// os.Exit(rig.MainWithKnc(m, &kncBinary)).
func MainWithKnc(m *testing.M, bin *string) int {
	dir, err := os.MkdirTemp("", "knc-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	if *bin, err = BuildKnc(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return m.Run()
}

// Knc is one `knc run` process serving a routing table file. Restarting it
// keeps its data directory and table, and picks a new HTTP port unless
// the arguments fix one.
type Knc struct {
	t       testing.TB
	bin     string
	Table   string
	DataDir string
	args    []string
	// manifests, when set instead of Table, is the directory of
	// manifests `knc run` compiles itself.
	manifests string

	mu      sync.Mutex
	cmd     *exec.Cmd
	url     string
	log     *lineLog
	ready   chan string
	done    chan struct{}
	exitErr error
	// Starts counts the processes started so far.
	Starts int
}

// StartKnc writes table to a fresh directory and serves it with `knc run`
// plus args.
func StartKnc(t testing.TB, bin string, table *routing.Table, args ...string) *Knc {
	t.Helper()
	k := NewKnc(t, bin, table, args...)
	k.Start()
	return k
}

// NewKnc prepares a `knc run` of table plus args, not started. The args
// follow the rig's own flags, so a flag given in args overrides the rig's
// value for it (the last one given wins).
func NewKnc(t testing.TB, bin string, table *routing.Table, args ...string) *Knc {
	t.Helper()
	dir := t.TempDir()
	tablePath := filepath.Join(dir, "table.json")
	WriteTable(t, tablePath, table)
	return newKnc(t, bin, tablePath, filepath.Join(dir, "data"), args)
}

// NewKncServing prepares a `knc run` of the routing table the caller laid
// out at tablePath (a file, or a directory of parts as a pod mounts them)
// plus args, not started, with a fresh data directory.
func NewKncServing(t testing.TB, bin, tablePath string, args ...string) *Knc {
	t.Helper()
	return newKnc(t, bin, tablePath, filepath.Join(t.TempDir(), "data"), args)
}

// NewKncManifests prepares a `knc run DIR` plus args, not started: knc
// compiles the manifests under dir itself, as a user runs it.
func NewKncManifests(t testing.TB, bin, dir string, args ...string) *Knc {
	t.Helper()
	k := newKnc(t, bin, "", filepath.Join(t.TempDir(), "data"), args)
	k.manifests = dir
	return k
}

func newKnc(t testing.TB, bin, tablePath, dataDir string, args []string) *Knc {
	t.Helper()
	k := &Knc{t: t, bin: bin, Table: tablePath, DataDir: dataDir, args: args}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("knc log (last process of %s%s):\n%s", k.Table, k.manifests, k.Log())
		}
		k.Stop()
	})
	return k
}

// StartTogether starts every process, then waits for each to be ready:
// the nodes of a JetStream cluster become ready only once a quorum runs.
func StartTogether(ks ...*Knc) {
	for _, k := range ks {
		k.launch()
	}
	for _, k := range ks {
		k.awaitReady()
	}
}

// WriteTable encodes table to path.
func WriteTable(t testing.TB, path string, table *routing.Table) {
	t.Helper()
	b, err := routing.Encode(table)
	if err != nil {
		t.Fatal(err)
	}
	// Written aside and renamed, so that a reload never reads half a file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

var readyLine = regexp.MustCompile(`^knc: serving .* on (https?://\S+)$`)

// Start starts the process and waits until it is ready.
func (k *Knc) Start() {
	k.t.Helper()
	k.launch()
	k.awaitReady()
}

func (k *Knc) launch() {
	t := k.t
	t.Helper()
	source := []string{"--table", k.Table}
	if k.manifests != "" {
		source = []string{k.manifests}
	}
	args := append(append([]string{"run"}, source...), "--http-addr", "127.0.0.1:0", "--data-dir", k.DataDir,
		"--ack-wait", "2s", "--log-level", "info")
	args = append(args, k.args...)
	cmd := exec.Command(k.bin, args...)
	ready := make(chan string, 1)
	log := &lineLog{watch: func(line string) {
		if m := readyLine.FindStringSubmatch(line); m != nil {
			select {
			case ready <- m[1]:
			default:
			}
		}
	}}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	consumed := make(chan struct{})
	go func() {
		log.consume(stderr)
		close(consumed)
	}()
	go func() {
		<-consumed
		err := cmd.Wait()
		k.mu.Lock()
		k.exitErr = err
		k.mu.Unlock()
		close(done)
	}()
	k.mu.Lock()
	k.cmd, k.log, k.ready, k.done = cmd, log, ready, done
	k.Starts++
	k.url = ""
	k.mu.Unlock()
}

func (k *Knc) awaitReady() {
	t := k.t
	t.Helper()
	k.mu.Lock()
	log, ready, done := k.log, k.ready, k.done
	k.mu.Unlock()
	select {
	case url := <-ready:
		k.mu.Lock()
		k.url = url
		k.mu.Unlock()
	case <-done:
		t.Fatalf("knc exited before it was ready (%v):\n%s", k.ExitErr(), log)
	case <-time.After(60 * time.Second):
		t.Fatalf("knc not ready after 60s:\n%s", log)
	}
	Eventually(t, 30*time.Second, "/readyz to answer 200", func() bool {
		resp, err := http.Get(k.URL() + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// URL is the base URL of the current process.
func (k *Knc) URL() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.url
}

// BrokerURL is the ingress of a Broker of the current process.
func (k *Knc) BrokerURL(namespace, name string) string {
	return k.URL() + routing.BrokerPath(namespace, name)
}

// ChannelURL is the ingress of a Channel of the current process.
func (k *Knc) ChannelURL(namespace, name string) string {
	return k.URL() + routing.ChannelPath(namespace, name)
}

// Log is the stderr of the current process.
func (k *Knc) Log() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.log == nil {
		return ""
	}
	return k.log.String()
}

// ExitErr is how the last process ended.
func (k *Knc) ExitErr() error {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.exitErr
}

func (k *Knc) current() (*exec.Cmd, chan struct{}) {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.cmd, k.done
}

// Kill sends SIGKILL and waits for the process to be gone.
func (k *Knc) Kill() {
	k.t.Helper()
	cmd, done := k.current()
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		k.t.Fatal(err)
	}
	<-done
}

// Signal sends sig to the current process.
func (k *Knc) Signal(sig os.Signal) {
	k.t.Helper()
	cmd, _ := k.current()
	if err := cmd.Process.Signal(sig); err != nil {
		k.t.Fatal(err)
	}
}

// Reload writes table and sends SIGHUP.
func (k *Knc) Reload(table *routing.Table) {
	k.t.Helper()
	WriteTable(k.t, k.Table, table)
	k.Signal(syscall.SIGHUP)
}

// Terminate sends SIGTERM and returns how long the process took to exit.
// A process still running after the grace period is killed and fails the
// test.
func (k *Knc) Terminate() time.Duration {
	k.t.Helper()
	cmd, done := k.current()
	start := time.Now()
	exited, err := terminate(cmd, done)
	if err != nil {
		k.t.Fatal(err)
	}
	if !exited {
		k.t.Fatalf("knc still running %s after SIGTERM:\n%s", stopGrace, k.Log())
	}
	return time.Since(start)
}

// Stop sends SIGTERM, then SIGKILL after the grace period, unless the
// process is gone already.
func (k *Knc) Stop() {
	cmd, done := k.current()
	if cmd == nil {
		return
	}
	select {
	case <-done:
		return
	default:
	}
	if _, err := terminate(cmd, done); err != nil {
		// The process exited between the check above and the signal.
		<-done
	}
}

// stopGrace is how long a process may take to exit after SIGTERM: longer
// than any drain the tests configure.
const stopGrace = 20 * time.Second

// terminate sends SIGTERM to cmd and waits until done is closed, killing
// the process when stopGrace passes first; exited says whether it went in
// time.
func terminate(cmd *exec.Cmd, done <-chan struct{}) (exited bool, err error) {
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return false, fmt.Errorf("sending SIGTERM to knc: %w", err)
	}
	select {
	case <-done:
		return true, nil
	case <-time.After(stopGrace):
		_ = cmd.Process.Kill()
		<-done
		return false, nil
	}
}

// Pid is the current process's id.
func (k *Knc) Pid() int {
	cmd, _ := k.current()
	return cmd.Process.Pid
}

// Eventually polls cond every few milliseconds until it holds, and fails
// the test when timeout passes first.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
