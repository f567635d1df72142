package routetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/internal/safeio"
)

// Suffixes name test files wherever they are; every YAML file in a
// .knc/tests directory is one too.
var Suffixes = []string{".knctest.yaml", ".knctest.yml"}

// IsTestFile reports whether the name marks a test file.
func IsTestFile(name string) bool {
	for _, s := range Suffixes {
		if strings.HasSuffix(name, s) {
			return true
		}
	}
	return false
}

// TestsDir is where a project keeps test files that are not beside its
// manifests.
var TestsDir = filepath.Join(".knc", "tests")

// FindTestsDir lists the YAML files in root's .knc/tests. The directory,
// or a file in it, may be a symbolic link to a place below root; one that
// leads outside root is an error, as every link of a project is, rather
// than a directory that seems to hold no tests.
func FindTestsDir(root string) ([]string, error) {
	var out []string
	if err := walkTestsDir(root, filepath.Join(root, TestsDir), &out); err != nil && err != filepath.SkipDir {
		return nil, err
	}
	return out, nil
}

// Find walks dirs for test files: *.knctest.yaml anywhere outside hidden
// directories, and any YAML file in .knc/tests. A test file or .knc/tests
// that is a symbolic link leading outside the directory walked is an
// error. The result is sorted and holds each file once.
func Find(dirs []string) ([]string, error) {
	var out []string
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				if p != dir && strings.HasPrefix(d.Name(), ".") {
					if d.Name() == ".knc" {
						return walkTestsDir(dir, filepath.Join(p, "tests"), &out)
					}
					return filepath.SkipDir
				}
				return nil
			}
			if IsTestFile(d.Name()) {
				if err := within(dir, p, d); err != nil {
					return err
				}
				out = append(out, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// walkTestsDir adds the YAML files of dir, a .knc/tests below root, to
// out, and returns filepath.SkipDir once done, for the walk that found it.
func walkTestsDir(root, dir string, out *[]string) error {
	if _, err := os.Lstat(dir); err != nil {
		return filepath.SkipDir
	}
	// The directory, or .knc above it, may be a link.
	if err := safeio.Within(root, dir); err != nil {
		return err
	}
	// The trailing separator makes WalkDir enter a linked directory.
	walkRoot := dir + string(filepath.Separator)
	err := filepath.WalkDir(walkRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == walkRoot {
			return nil
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
			if err := within(root, p, d); err != nil {
				return err
			}
			*out = append(*out, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return filepath.SkipDir
}

// within checks that p, which the walk of root found as d, does not lead
// outside root through a symbolic link.
func within(root, p string, d fs.DirEntry) error {
	if d.Type()&fs.ModeSymlink == 0 {
		return nil
	}
	return safeio.Within(root, p)
}
