package routetest

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// FindTestsDir lists the YAML files in root's .knc/tests.
func FindTestsDir(root string) ([]string, error) {
	var out []string
	if err := walkTestsDir(filepath.Join(root, TestsDir), &out); err != nil && err != filepath.SkipDir {
		return nil, err
	}
	return out, nil
}

// Find walks dirs for test files: *.knctest.yaml anywhere outside hidden
// directories, and any YAML file in .knc/tests. The result is sorted and
// holds each file once.
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
						return walkTestsDir(filepath.Join(p, "tests"), &out)
					}
					return filepath.SkipDir
				}
				return nil
			}
			if IsTestFile(d.Name()) {
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

func walkTestsDir(dir string, out *[]string) error {
	if _, err := os.Stat(dir); err != nil {
		return filepath.SkipDir
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != dir && strings.HasPrefix(d.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if ext := filepath.Ext(p); ext == ".yaml" || ext == ".yml" {
			*out = append(*out, p)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return filepath.SkipDir
}
