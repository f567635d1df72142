package graphvizcache

import (
	"os/exec"
	"strings"
	"testing"
)

// TestImportsOnlyTheStandardLibrary holds the package to what its init
// order rests on: with only standard-library imports, it is initialized
// before go-graphviz's WebAssembly package, whose imports sort after it.
func TestImportsOnlyTheStandardLibrary(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range strings.Fields(string(out)) {
		if p != "github.com/knc-dev/knc/internal/graphvizcache" {
			t.Errorf("imports %s, which is not in the standard library", p)
		}
	}
}
