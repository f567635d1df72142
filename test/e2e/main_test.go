package e2e

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/knc-dev/knc/runtime/routing"
	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the whole suite.
var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(rig.MainWithKnc(m, &kncBinary))
}

// knc is one `knc run` process.
type knc struct {
	t       *testing.T
	cmd     *exec.Cmd
	url     string
	dataDir string
	table   string
	args    []string
	log     *logBuffer
	done    chan struct{}
	exitErr error
}

// logBuffer collects a process's stderr and reports the URL of its ready line.
type logBuffer struct {
	mu    sync.Mutex
	lines []string
	ready chan string
}

var readyLine = regexp.MustCompile(`^knc: serving .* on (http://\S+)$`)

func (b *logBuffer) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		b.mu.Lock()
		b.lines = append(b.lines, line)
		b.mu.Unlock()
		if m := readyLine.FindStringSubmatch(line); m != nil {
			select {
			case b.ready <- m[1]:
			default:
			}
		}
	}
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Join(b.lines, "\n")
}

// writeTable writes t where knc can read it.
func writeTable(t *testing.T, path string, table *routing.Table) {
	t.Helper()
	b, err := routing.Encode(table)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// startKnc serves table with a fresh data directory.
func startKnc(t *testing.T, table *routing.Table, args ...string) *knc {
	t.Helper()
	dir := t.TempDir()
	k := &knc{t: t, dataDir: filepath.Join(dir, "data"), table: filepath.Join(dir, "table.json"), args: args}
	writeTable(t, k.table, table)
	k.start()
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("knc log:\n%s", k.log)
		}
		k.stop()
	})
	return k
}

// start starts (or restarts) the process on a new port with the same data.
func (k *knc) start() {
	t := k.t
	t.Helper()
	args := append([]string{"run", "--table", k.table, "--http-addr", "127.0.0.1:0", "--data-dir", k.dataDir,
		"--ack-wait", "2s", "--log-level", "debug"}, k.args...)
	k.cmd = exec.Command(kncBinary, args...)
	k.log = &logBuffer{ready: make(chan string, 1)}
	stderr, err := k.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := k.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	k.done = make(chan struct{})
	consumed := make(chan struct{})
	go func() {
		k.log.consume(stderr)
		close(consumed)
	}()
	go func() {
		<-consumed
		k.exitErr = k.cmd.Wait()
		close(k.done)
	}()
	select {
	case k.url = <-k.log.ready:
	case <-k.done:
		t.Fatalf("knc exited before it was ready (%v):\n%s", k.exitErr, k.log)
	case <-time.After(30 * time.Second):
		t.Fatalf("knc not ready after 30s:\n%s", k.log)
	}
	eventually(t, 10*time.Second, "/readyz to answer 200", func() bool {
		resp, err := http.Get(k.url + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// terminate sends SIGTERM and returns how long the process took to exit.
func (k *knc) terminate() time.Duration {
	k.t.Helper()
	start := time.Now()
	if err := k.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		k.t.Fatal(err)
	}
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
		k.t.Fatalf("knc still running 20s after SIGTERM:\n%s", k.log)
	}
	return time.Since(start)
}

// crash kills the process without warning.
func (k *knc) crash() {
	k.t.Helper()
	if err := k.cmd.Process.Kill(); err != nil {
		k.t.Fatal(err)
	}
	<-k.done
}

func (k *knc) stop() {
	select {
	case <-k.done:
		return
	default:
	}
	_ = k.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-k.done:
	case <-time.After(20 * time.Second):
		_ = k.cmd.Process.Kill()
		<-k.done
	}
}

// reload rewrites the table and sends SIGHUP.
func (k *knc) reload(table *routing.Table) {
	k.t.Helper()
	writeTable(k.t, k.table, table)
	if err := k.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		k.t.Fatal(err)
	}
}

// eventually polls cond every few milliseconds until it holds, and fails the
// test when timeout passes first.
func eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func testContext(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}
