//go:build linux

package kubetest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"syscall"
)

// reaperScript waits for a line on stdin. "done" means the control plane was
// stopped normally; end of file means the test binary died without calling
// Stop (a panicking test, -timeout, a signal), and the control plane it left
// behind is killed. envtest starts etcd and kube-apiserver in their own
// process groups, so nothing else would ever stop them.
const reaperScript = `root=$1; shift
read -r line
[ "$line" = done ] && exit 0
kill -KILL "$@" 2>/dev/null
# Bounded: a killed process lingers as a zombie where nothing reaps it.
n=0
for pid in "$@"; do
	while kill -0 "$pid" 2>/dev/null && [ $n -lt 50 ]; do sleep 0.1; n=$((n+1)); done
done
rm -rf "$root"
`

// reaper is a watchdog process that outlives the test binary.
type reaper struct {
	cmd *exec.Cmd
	w   *os.File
}

// startReaper starts a watchdog for the running children of this process
// whose executable is one of paths, and for the directory root.
func startReaper(root string, paths ...string) (*reaper, error) {
	pids, err := childPIDs(paths)
	if err != nil {
		return nil, err
	}
	if len(pids) != len(paths) {
		return nil, fmt.Errorf("kubetest: found %d control-plane processes to watch, want %d (%v)", len(pids), len(paths), paths)
	}
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("kubetest: watchdog pipe: %w", err)
	}
	args := []string{"-c", reaperScript, "kubetest-reaper", root}
	for _, pid := range pids {
		args = append(args, strconv.Itoa(pid))
	}
	cmd := exec.Command("/bin/sh", args...)
	cmd.Stdin = r
	// Its own process group keeps it alive through a Ctrl-C that kills the
	// test binary's group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("kubetest: starting the watchdog: %w", err)
	}
	r.Close()
	return &reaper{cmd: cmd, w: w}, nil
}

// release ends the watchdog. With kill, it kills the processes it watches
// and removes their directory first.
func (r *reaper) release(kill bool) error {
	var werr error
	if !kill {
		_, werr = r.w.WriteString("done\n")
	}
	cerr := r.w.Close()
	if err := r.cmd.Wait(); err != nil {
		return fmt.Errorf("kubetest: watchdog: %w", err)
	}
	if werr != nil {
		return fmt.Errorf("kubetest: watchdog: %w", werr)
	}
	if cerr != nil {
		return fmt.Errorf("kubetest: watchdog: %w", cerr)
	}
	return nil
}

// childPIDs lists the children of this process whose argv[0] is one of
// paths. envtest keeps its process handles private, and /proc is the only
// other way to learn them.
func childPIDs(paths []string) ([]int, error) {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil, fmt.Errorf("kubetest: listing processes: %w", err)
	}
	self := os.Getpid()
	var pids []int
	for _, ent := range entries {
		pid, err := strconv.Atoi(ent.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + ent.Name() + "/stat")
		if err != nil {
			continue // exited meanwhile
		}
		// The command name in parentheses may itself contain spaces and
		// parentheses; the fields after the last ')' are state, then ppid.
		i := bytes.LastIndexByte(stat, ')')
		if i < 0 {
			continue
		}
		fields := bytes.Fields(stat[i+1:])
		if len(fields) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(string(fields[1])); err != nil || ppid != self {
			continue
		}
		cmdline, err := os.ReadFile("/proc/" + ent.Name() + "/cmdline")
		if err != nil {
			continue
		}
		argv0, _, _ := bytes.Cut(cmdline, []byte{0})
		if slices.Contains(paths, string(argv0)) {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}
