package drawing

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	drawcli "github.com/knc-dev/knc/cmd/knc-draw/cli"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// asKncDraw makes this test binary knc-draw itself when it is started
// with it set, so that the tests run the real command without building it.
const asKncDraw = "KNC_DRAW_TEST_AS_COMMAND"

// asParent makes this test binary a knc that starts a layout, prints
// knc-draw's process id and waits to be killed; with asKncDraw=hang, that
// knc-draw never ends by itself.
const asParent = "KNC_DRAW_TEST_AS_PARENT"

func TestMain(m *testing.M) {
	if os.Getenv(asParent) != "" {
		os.Unsetenv(asParent)
		started = func(pid int) { fmt.Println(pid) }
		_ = WriteSVG(context.Background(), io.Discard, mesh(4))
		os.Exit(0)
	}
	switch os.Getenv(asKncDraw) {
	case "":
	case "hang":
		// A layout that never ends, as a large one seems to.
		_, _ = io.Copy(io.Discard, os.Stdin)
		select {}
	default:
		os.Exit(drawcli.Main())
	}
	os.Setenv(asKncDraw, "1")
	os.Setenv(EnvCommand, os.Args[0])
	os.Exit(m.Run())
}

// mesh is brokers Brokers with three Triggers each, every Trigger
// forwarding to another Broker: cycles, which dot lays out slowest.
func mesh(brokers int) *topology.Graph {
	sources := map[string]*topology.Source{}
	for b := range brokers {
		s := &topology.Source{ID: fmt.Sprintf("Broker/m/b%d", b), Kind: topology.KindBroker, Namespace: "m", Name: fmt.Sprintf("b%d", b)}
		for t := range 3 {
			name := fmt.Sprintf("t%d-%d", b, t)
			s.Routes = append(s.Routes, &topology.Route{
				ID: "Trigger/m/" + name, Kind: topology.KindTrigger, Namespace: "m", Name: name,
				Edges: []*topology.Edge{{Role: topology.Subscriber, To: fmt.Sprintf("Broker/m/b%d", (b*7+t+1)%brokers)}},
			})
		}
		sources[s.ID] = s
	}
	return topology.Assemble(sources, nil)
}

// TestDrawingIsTheInProcessLayout: knc-draw's drawing is byte for byte
// the one the layout package draws inside the process.
func TestDrawingIsTheInProcessLayout(t *testing.T) {
	g := mesh(4)
	for _, tt := range []struct {
		format   string
		child    func(context.Context, *bytes.Buffer, *topology.Graph) error
		inside   func(context.Context, *bytes.Buffer, *topology.Graph) error
		contains string
	}{
		{"svg",
			func(ctx context.Context, b *bytes.Buffer, g *topology.Graph) error { return WriteSVG(ctx, b, g) },
			func(ctx context.Context, b *bytes.Buffer, g *topology.Graph) error {
				return layout.WriteSVGContext(ctx, b, g)
			},
			"<svg"},
		{"png",
			func(ctx context.Context, b *bytes.Buffer, g *topology.Graph) error { return WritePNG(ctx, b, g) },
			func(ctx context.Context, b *bytes.Buffer, g *topology.Graph) error {
				return layout.WritePNGContext(ctx, b, g)
			},
			"\x89PNG"},
	} {
		t.Run(tt.format, func(t *testing.T) {
			var child, inside bytes.Buffer
			if err := tt.child(t.Context(), &child, g); err != nil {
				t.Fatal(err)
			}
			if err := tt.inside(t.Context(), &inside, g); err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(child.Bytes(), []byte(tt.contains)) {
				t.Errorf("knc-draw's %s does not hold %q", tt.format, tt.contains)
			}
			if !bytes.Equal(child.Bytes(), inside.Bytes()) {
				t.Errorf("knc-draw's %s (%d bytes) differs from the in-process layout's (%d bytes)", tt.format, child.Len(), inside.Len())
			}
		})
	}
}

// TestStoppedLayoutEndsItsProcess: a layout nobody waits for any more
// ends with its process at once, where a layout inside the process would
// go on to its end.
func TestStoppedLayoutEndsItsProcess(t *testing.T) {
	ctx, cancel := context.WithCancelCause(t.Context())
	var pid int
	started = func(p int) {
		pid = p
		cancel(errors.New("the client left"))
	}
	t.Cleanup(func() { started = nil })
	var out bytes.Buffer
	err := WriteSVG(ctx, &out, mesh(400))
	if !errors.Is(err, topology.ErrLayoutStopped) || !strings.Contains(err.Error(), "the client left") {
		t.Fatalf("error %v, want %v with its cause", err, topology.ErrLayoutStopped)
	}
	if pid == 0 {
		t.Fatal("no knc-draw was started")
	}
	// WriteSVG waited for the process: it is gone, not left running.
	if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("knc-draw (pid %d) still exists after the layout was stopped: %v", pid, err)
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes written after the layout was stopped, want none", out.Len())
	}
}

// TestLayoutEndsWithItsParent: knc killed in the middle of a layout
// leaves no knc-draw behind.
func TestLayoutEndsWithItsParent(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("only Linux ends a child with its parent")
	}
	parent := exec.Command(os.Args[0], "-test.run=^$")
	parent.Env = append(os.Environ(), asParent+"=1", asKncDraw+"=hang")
	stdout, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent printed no process id: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	deadline := time.Now().Add(time.Minute)
	for running(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("knc-draw (pid %d) still runs a minute after its parent was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// running says whether the process pid exists and is not a zombie (a
// container's first process may not reap the orphans it inherits).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the command name, which is in parentheses.
	rest := stat[bytes.LastIndexByte(stat, ')')+1:]
	return !bytes.HasPrefix(bytes.TrimSpace(rest), []byte("Z"))
}

// TestTooLargeIsRefusedBeforeStarting: a graph beyond the layout limits
// starts no process.
func TestTooLargeIsRefusedBeforeStarting(t *testing.T) {
	started = func(int) { t.Error("knc-draw was started for a graph too large to lay out") }
	t.Cleanup(func() { started = nil })
	err := WriteSVG(t.Context(), &bytes.Buffer{}, mesh(1700))
	if !errors.Is(err, topology.ErrTooLargeToLayOut) {
		t.Fatalf("error %v, want %v", err, topology.ErrTooLargeToLayOut)
	}
}

// TestFind: $KNC_DRAW first, then beside the running binary, then PATH;
// none of them gives an error that says how to install it.
func TestFind(t *testing.T) {
	onPath := t.TempDir()
	executable := filepath.Join(onPath, Command)
	if err := os.WriteFile(executable, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	notExecutable := filepath.Join(t.TempDir(), Command)
	if err := os.WriteFile(notExecutable, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, env, path string
		want            string
		wantErr         string
	}{
		{name: "named by the environment", env: executable, path: "", want: executable},
		{name: "found on PATH", env: "", path: onPath, want: executable},
		{name: "named but not executable", env: notExecutable, path: onPath,
			wantErr: "knc-draw, which lays out drawings, was not found: $KNC_DRAW is \"" + notExecutable + "\", which is not an executable file; point it at knc-draw, or unset it"},
		{name: "nowhere", env: "", path: t.TempDir(),
			wantErr: "knc-draw, which lays out drawings, was not found at " + filepath.Join(filepath.Dir(os.Args[0]), Command) + " or on PATH: install it from the archive knc came in (or go install github.com/knc-dev/knc/cmd/knc-draw), or set $KNC_DRAW to its path"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv(EnvCommand, tt.env)
			t.Setenv("PATH", tt.path)
			got, err := find()
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr || !errors.Is(err, ErrNoDrawer) {
					t.Fatalf("find() = %q, %v; want the error %q", got, err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("find() = %q, %v; want %q", got, err, tt.want)
			}
		})
	}
}

// TestFailureCarriesKncDrawsMessage: what knc-draw says when it fails is
// the error, without its program name twice.
func TestFailureCarriesKncDrawsMessage(t *testing.T) {
	dir := t.TempDir()
	failing := filepath.Join(dir, Command)
	script := "#!/bin/sh\necho 'knc-draw: laying out the drawing: out of memory' >&2\nexit 1\n"
	if err := os.WriteFile(failing, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvCommand, failing)
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	err := WriteSVG(ctx, &bytes.Buffer{}, mesh(2))
	want := "laying out the drawing with " + failing + ": laying out the drawing: out of memory"
	if err == nil || err.Error() != want {
		t.Fatalf("error %v, want %q", err, want)
	}
}
