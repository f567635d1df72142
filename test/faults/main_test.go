package faults

import (
	"fmt"
	"os"
	"testing"

	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the package.
var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "knc-faults-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	if kncBinary, err = rig.BuildKnc(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return m.Run()
}
