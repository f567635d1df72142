package routing_test

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/knc-dev/knc"

// deps returns the packages each package matching the patterns depends on,
// directly or not, tests left out, as go list reports them.
func deps(t *testing.T, patterns ...string) map[string][]string {
	t.Helper()
	args := append([]string{"list", "-f", "{{.ImportPath}}{{range .Deps}} {{.}}{{end}}"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	m := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if len(fields) > 0 {
			m[fields[0]] = fields[1:]
		}
	}
	if len(m) == 0 {
		t.Fatalf("go list %v listed no package", patterns)
	}
	return m
}

// TestRuntimeImportsNoCompiler checks the layering the routing table
// stands for: the runtime knows the compiler only by the table, so no
// runtime package depends on a package under compiler/; and the drawing
// both sides share (internal/topology) depends on neither side but the
// table.
func TestRuntimeImportsNoCompiler(t *testing.T) {
	for pkg, ds := range deps(t, module+"/runtime/...", module+"/internal/topology") {
		for _, d := range ds {
			if strings.HasPrefix(d, module+"/compiler/") {
				t.Errorf("%s depends on %s: the runtime may know the compiler only by the routing table", pkg, d)
			}
			if pkg == module+"/internal/topology" && strings.HasPrefix(d, module+"/runtime/") && d != module+"/internal/routing" {
				t.Errorf("%s depends on %s: the drawing may know the runtime only by the routing table", pkg, d)
			}
		}
	}
}

// TestRoutingIsALeaf checks that this package imports only the standard
// library, so that the compiler and the runtime can both depend on it.
func TestRoutingIsALeaf(t *testing.T) {
	for pkg, ds := range deps(t, module+"/internal/routing") {
		for _, d := range ds {
			if strings.Contains(strings.SplitN(d, "/", 2)[0], ".") {
				t.Errorf("%s depends on %s, outside the standard library", pkg, d)
			}
		}
	}
}
