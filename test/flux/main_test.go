package flux

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/knc-dev/knc/internal/kubetest"
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
	kncBinary = filepath.Join(dir, "knc")
	build := exec.Command("go", "build", "-o", kncBinary, "github.com/knc-dev/knc/cmd/knc")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building knc:", err)
		return 2
	}
	return kubetest.Main(m)
}
