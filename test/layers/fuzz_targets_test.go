package layers

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// fuzzFunc matches the declaration of a fuzz test.
var fuzzFunc = regexp.MustCompile(`(?m)^func (Fuzz\w*)\(\w+ \*testing\.F\)`)

// TestMakeFuzzRunsEveryFuzzTest fails when a fuzz test of the module is
// missing from the Makefile's FUZZ_TARGETS, which `make fuzz` runs, or
// when FUZZ_TARGETS names one that no longer exists.
func TestMakeFuzzRunsEveryFuzzTest(t *testing.T) {
	root, err := moduleRoot()
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			// Other modules (hack/image, hack/testbin) and hidden or
			// generated folders run no fuzz tests of this module.
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "bin") {
				return filepath.SkipDir
			}
			if _, err := os.Stat(filepath.Join(path, "go.mod")); err == nil && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, filepath.Dir(path))
		if err != nil {
			return err
		}
		for _, m := range fuzzFunc.FindAllSubmatch(src, -1) {
			declared = append(declared, "./"+filepath.ToSlash(rel)+":"+string(m[1]))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	makefile, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for line := range strings.Lines(string(makefile)) {
		if rest, ok := strings.CutPrefix(line, "FUZZ_TARGETS :="); ok {
			listed = strings.Fields(rest)
		}
	}
	if len(listed) == 0 {
		t.Fatal("the Makefile sets no FUZZ_TARGETS")
	}
	for _, d := range declared {
		if !slices.Contains(listed, d) {
			t.Errorf("%s is not in the Makefile's FUZZ_TARGETS, so make fuzz does not run it", d)
		}
	}
	for _, l := range listed {
		if !slices.Contains(declared, l) {
			t.Errorf("the Makefile's FUZZ_TARGETS names %s, which is not a fuzz test of that folder", l)
		}
	}
}
