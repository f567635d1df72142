// Package browsertest finds the headless Chromium that knc's browser tests
// drive, installing Debian's package when there is none and the test runs
// as root.
package browsertest

import (
	"os"
	"os/exec"
	"sync"
	"testing"
)

// installing serialises installs by tests of one process; apt-get's own
// lock would refuse a second install instead of waiting for it.
var installing sync.Mutex

// Chromium returns the path of a Chromium. Without one it runs apt-get
// install chromium (after apt-get update when the package lists are stale
// or missing); it skips the test, saying how to get Chromium, only when
// none can be had.
func Chromium(t testing.TB) string {
	t.Helper()
	if path, ok := installed(); ok {
		return path
	}
	installing.Lock()
	defer installing.Unlock()
	if path, ok := installed(); ok {
		return path
	}
	apt, err := exec.LookPath("apt-get")
	if err != nil || os.Geteuid() != 0 {
		t.Skip("Chromium is not installed, and this user cannot install it: install Debian's chromium package (apt-get install chromium) to run the browser test")
	}
	install := func() ([]byte, error) {
		return exec.Command(apt, "-o", "DPkg::Lock::Timeout=120", "install", "-y", "--no-install-recommends", "chromium").CombinedOutput()
	}
	out, err := install()
	if err != nil {
		if upd, uerr := exec.Command(apt, "-o", "DPkg::Lock::Timeout=120", "update").CombinedOutput(); uerr != nil {
			out = append(out, upd...)
		} else {
			out, err = install()
		}
	}
	if err != nil {
		t.Skipf("Chromium is not installed, and apt-get install chromium failed (%v); install Debian's chromium package to run the browser test:\n%s", err, out)
	}
	path, ok := installed()
	if !ok {
		t.Skip("apt-get installed chromium, but it is not on PATH")
	}
	return path
}

func installed() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if path, err := exec.LookPath(name); err == nil {
			return path, true
		}
	}
	return "", false
}
