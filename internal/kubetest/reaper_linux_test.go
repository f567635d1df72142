package kubetest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const reaperChildEnv = "KUBETEST_REAPER_CHILD"

// TestWatchdogStopsControlPlaneAfterPanic runs this test binary again with a
// test that panics, which skips TestMain's deferred Stop, and checks that
// the control plane that process started does not outlive it.
func TestWatchdogStopsControlPlaneAfterPanic(t *testing.T) {
	if os.Getenv(reaperChildEnv) == "1" {
		env := Current(t)
		pids, err := childPIDs([]string{env.te.ControlPlane.Etcd.Path, env.te.ControlPlane.APIServer.Path})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Printf("control plane: pids=%v root=%s\n", pids, env.root)
		panic("deliberate panic: the watchdog must stop the control plane")
	}
	Current(t)
	if testing.Short() {
		t.Skip("starts a second control plane")
	}

	cmd := exec.Command(os.Args[0], "-test.run=^TestWatchdogStopsControlPlaneAfterPanic$", "-test.count=1")
	cmd.Env = append(os.Environ(), reaperChildEnv+"=1")
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), "deliberate panic") {
		t.Fatalf("child test: %v, want it to panic; output:\n%s", err, out)
	}
	m := regexp.MustCompile(`control plane: pids=\[(\d+) (\d+)\] root=(\S+)`).FindStringSubmatch(string(out))
	if m == nil {
		t.Fatalf("child test did not report its control plane; output:\n%s", out)
	}
	root := m[3]

	deadline := time.Now().Add(15 * time.Second)
	for _, s := range m[1:3] {
		pid, _ := strconv.Atoi(s)
		for alive(pid) {
			if time.Now().After(deadline) {
				t.Fatalf("control-plane process %d still running after its test binary died", pid)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for {
		if _, err := os.Stat(root); errors.Is(err, os.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("control-plane directory %s still present after its test binary died", root)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports whether pid runs; a zombie, which nothing may reap inside a
// container, counts as dead.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || !strings.HasPrefix(string(stat[i+1:]), " Z")
}
