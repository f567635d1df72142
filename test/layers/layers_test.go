package layers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/knc-dev/knc"

// rank is the layer of each top-level folder: a package may import one of
// its own folder or of a lower rank, never of its rank or above.
var rank = map[string]int{
	"internal": 0,
	"schema":   1,
	"compiler": 2,
	"runtime":  2,
	"plugins":  3,
	"cmd":      4,
	"test":     5,
	"golden":   5,
	"examples": 5,
}

// pkg is what go list says of one package of the module.
type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

// list runs go list over patterns from the module's root. It leaves test
// files out: what a test imports does not make a layer depend on another.
func list(t *testing.T, args ...string) []pkg {
	t.Helper()
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,Deps,Standard"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("decoding go list: %v", err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func moduleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// folder is the top-level folder of one of the module's packages.
func folder(importPath string) (string, bool) {
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return "", false
	}
	top, _, _ := strings.Cut(rest, "/")
	return top, true
}

// folderImports maps each top-level folder to the folders it imports, and
// each such edge to one package import that makes it.
func folderImports(pkgs []pkg) map[string]map[string]string {
	edges := map[string]map[string]string{}
	for _, p := range pkgs {
		from, ok := folder(p.ImportPath)
		if !ok {
			continue
		}
		for _, imp := range p.Imports {
			to, ok := folder(imp)
			if !ok || to == from {
				continue
			}
			if edges[from] == nil {
				edges[from] = map[string]string{}
			}
			if _, seen := edges[from][to]; !seen {
				edges[from][to] = p.ImportPath + " imports " + imp
			}
		}
	}
	return edges
}

// TestNoFolderLoops fails when two top-level folders import each other,
// directly or through others.
func TestNoFolderLoops(t *testing.T) {
	edges := folderImports(list(t, "./..."))
	var loops []string
	seen := map[string]bool{}
	var walk func(path []string)
	walk = func(path []string) {
		from := path[len(path)-1]
		for _, to := range slices.Sorted(maps.Keys(edges[from])) {
			if i := slices.Index(path, to); i >= 0 {
				// One loop is found from each folder in it: report it
				// once, from its first folder by name.
				cycle := path[i:]
				first := slices.Index(cycle, slices.Min(cycle))
				cycle = append(slices.Clone(cycle[first:]), cycle[:first]...)
				loop := append(cycle, cycle[0])
				var why []string
				for j := range len(loop) - 1 {
					why = append(why, edges[loop[j]][loop[j+1]])
				}
				key := strings.Join(loop, " → ")
				if !seen[key] {
					seen[key] = true
					loops = append(loops, fmt.Sprintf("%s (%s)", key, strings.Join(why, "; ")))
				}
				continue
			}
			walk(append(slices.Clone(path), to))
		}
	}
	for _, from := range slices.Sorted(maps.Keys(edges)) {
		walk([]string{from})
	}
	if len(loops) > 0 {
		t.Errorf("folders import each other; invert the dependency, as compiler/backend does for plugins:\n  %s", strings.Join(loops, "\n  "))
	}
}

// TestFoldersInLayers fails when a folder imports one of its own layer or
// one above it, and when a folder has no layer.
func TestFoldersInLayers(t *testing.T) {
	edges := folderImports(list(t, "./..."))
	for _, from := range slices.Sorted(maps.Keys(edges)) {
		if _, ok := rank[from]; !ok {
			t.Errorf("folder %s has no layer: add it to rank", from)
			continue
		}
		for _, to := range slices.Sorted(maps.Keys(edges[from])) {
			if _, ok := rank[to]; !ok {
				t.Errorf("folder %s has no layer: add it to rank", to)
				continue
			}
			if rank[to] >= rank[from] {
				t.Errorf("%s (layer %d) imports %s (layer %d), which is not below it: %s", from, rank[from], to, rank[to], edges[from][to])
			}
		}
	}
}

// TestRoutingContractIsALeaf fails when the routing table, the one
// contract between compiler and runtime, depends on anything but the
// standard library.
func TestRoutingContractIsALeaf(t *testing.T) {
	for _, p := range list(t, "-deps", "./internal/routing") {
		if !p.Standard && p.ImportPath != module+"/internal/routing" {
			t.Errorf("internal/routing depends on %s: it may use the standard library only", p.ImportPath)
		}
	}
}

// cliMayImport lists what the CLI may import of the module: the compiler's
// pipeline (package compiler) and the packages of what it returns, the
// back ends it hands in, the runtime's entry packages, the schema, and the
// leaf libraries. The stages themselves (load, kustomize, check, policy,
// routes, render, crd) and the model they share are reached through
// package compiler only.
var cliMayImport = []string{
	"cmd/knc/routetest",
	"compiler",
	"compiler/diag",
	"compiler/diff",
	"compiler/graph",
	// Reads the cluster back: knc status and knc diff --cluster.
	"compiler/live",
	"compiler/project",
	"plugins",
	"runtime/cehttp",
	"runtime/cluster",
	"runtime/command",
	"runtime/engine",
	"runtime/ingress",
	// The admin API of kept letters, which knc dlq is a client of.
	"runtime/kept",
	"runtime/natsserver",
	"runtime/router",
	"runtime/status",
	"runtime/tracing",
	"runtime/ui",
	"schema",
	"schema/policy",
}

// TestCLIImports fails when cmd/knc/cli imports a package of the module
// beyond cliMayImport and the leaf libraries under internal/.
func TestCLIImports(t *testing.T) {
	for _, p := range list(t, "./cmd/knc/cli") {
		for _, imp := range p.Imports {
			rest, ok := strings.CutPrefix(imp, module+"/")
			if !ok || strings.HasPrefix(rest, "internal/") || slices.Contains(cliMayImport, rest) {
				continue
			}
			t.Errorf("cmd/knc/cli imports %s: reach it through package compiler, or add it to cliMayImport if it is an entry point", rest)
		}
	}
}
