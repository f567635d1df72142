package flux

import (
	"flag"
	"fmt"
	"os"
	"testing"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the whole package.
var kncBinary string

func TestMain(m *testing.M) { os.Exit(runMain(m)) }

func runMain(m *testing.M) int {
	flag.Parse()
	if testing.Short() {
		// Every test here needs the API server; each skips itself.
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "knc-flux-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer os.RemoveAll(dir)
	if kncBinary, err = rig.BuildKnc(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	return kubetest.Main(m)
}
