// Package compiler ties the stages together: it finds the project config,
// loads the manifests and checks them into a model. Every command (validate,
// build, diff, graph, route, run) starts here, so none re-reads files its
// own way.
//
// The compiler must not import the runtime's engine; the routing table
// (runtime/routing) is the one contract between the two.
package compiler

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/knc-dev/knc/compiler/check"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
)

// Options says what to compile.
type Options struct {
	// Paths are the files and directories to load; empty means ".".
	Paths []string
	// ConfigFile is knc.yaml; empty means look for it from the first path
	// upwards to the top of the git work tree.
	ConfigFile string
	// Exclude holds extra path.Match patterns relative to Dir.
	Exclude []string
	// Dir is the directory relative paths are taken from; empty means the
	// process's working directory.
	Dir string
}

// Result is a loaded, checked project.
type Result struct {
	Config *project.Config
	Set    *model.Set
	// Diagnostics are sorted and de-duplicated; the project is valid when
	// none of them is an error.
	Diagnostics diag.List
}

// Valid reports whether no error was found; warnings leave it valid.
func (r *Result) Valid() bool { return !r.Diagnostics.HasErrors() }

// Load finds the config, loads and checks the manifests. The error is for
// I/O problems only; problems with the input are Diagnostics.
func Load(opts Options) (*Result, error) {
	dir := opts.Dir
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, err
		}
		dir = wd
	}
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		// Relative paths stay relative when they are relative to the
		// working directory, so that errors name them as the user did.
		if !filepath.IsAbs(p) && opts.Dir != "" {
			p = filepath.Join(dir, p)
		}
		abs[i] = filepath.Clean(p)
	}

	cfgFile := opts.ConfigFile
	if cfgFile != "" && !filepath.IsAbs(cfgFile) {
		cfgFile = filepath.Join(dir, cfgFile)
	}
	if cfgFile == "" {
		start, err := filepath.Abs(abs[0])
		if err != nil {
			return nil, err
		}
		if info, err := os.Stat(start); err == nil && !info.IsDir() {
			start = filepath.Dir(start)
		}
		found, err := project.Find(start)
		if err != nil {
			return nil, err
		}
		cfgFile = found
	}
	res := &Result{Config: project.Default()}
	if cfgFile != "" {
		cfg, diags, err := project.Read(cfgFile)
		if err != nil {
			return nil, fmt.Errorf("reading project config: %w", err)
		}
		if len(diags) > 0 {
			res.Diagnostics = diags.Relative(dir).Sorted()
			res.Set = &model.Set{Index: map[model.Key]*model.Entry{}}
			return res, nil
		}
		res.Config = cfg
	}

	var excludes []string
	base := dir
	if cfgFile != "" {
		base = filepath.Dir(cfgFile)
		excludes = append(excludes, res.Config.Exclude...)
	}
	var skip []string
	if cfgFile != "" {
		skip = []string{filepath.Clean(cfgFile)}
	}
	files, err := load.Files(load.Options{Paths: abs, Exclude: excludes, Base: base, Skip: skip, Root: base})
	if err != nil {
		return nil, err
	}
	if len(opts.Exclude) > 0 {
		var kept []string
		for _, f := range files {
			if !load.Excluded(opts.Exclude, dir, f) {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	docs, diags, err := load.LoadFilesIn(dir, files)
	if err != nil {
		return nil, err
	}
	set, checkDiags := check.Check(docs, res.Config)
	res.Set = set
	res.Diagnostics = append(diags, checkDiags...).Relative(dir).Sorted()
	return res, nil
}
