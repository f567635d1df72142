package kubetest

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"testing"
)

var (
	shared    *Env
	sharedErr error
)

// Main starts the control plane, runs the tests and stops it, for use as
//
//	func TestMain(m *testing.M) { os.Exit(kubetest.Main(m)) }
//
// Tests reach the control plane with Current. Main reports a control plane
// that cannot start, or cannot stop, on standard error and returns 1, as a
// failing test would: TestMain has no testing.T to report through. Under
// -short, missing binaries are not a failure; the tests run, and those that
// call Current are skipped.
func Main(m *testing.M, opts ...Option) (code int) {
	// testing.Short needs the flags parsed, which m.Run would do later.
	if !flag.Parsed() {
		flag.Parse()
	}
	env, err := Start(opts...)
	if err != nil {
		if errors.Is(err, ErrBinariesMissing) && testing.Short() {
			sharedErr = err
			return m.Run()
		}
		fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
		return 1
	}
	shared = env
	defer func() {
		if err := env.Stop(); err != nil {
			fmt.Fprintf(os.Stderr, "FAIL: %v\n", err)
			if code == 0 {
				code = 1
			}
		}
	}()
	return m.Run()
}

// Current returns the control plane started by Main. It skips the test
// under -short when the binaries are missing, and fails it when TestMain
// did not call Main.
func Current(t testing.TB) *Env {
	t.Helper()
	switch {
	case shared != nil:
		return shared
	case sharedErr != nil:
		t.Skipf("skipped under -short: %v", sharedErr)
	default:
		t.Fatal("kubetest.Current: no control plane; call kubetest.Main from TestMain")
	}
	return nil
}
