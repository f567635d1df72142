// Package compiler ties the stages together: it finds the project config,
// loads the manifests and checks them into a model. Every command (validate,
// build, diff, graph, route, run) starts here, so none re-reads files its
// own way.
//
// The compiler must not import the runtime's engine; the routing table
// (internal/routing) is the one contract between the two.
package compiler

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/check"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/kustomize"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/safeio"
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
	// Stdin is read for the path "-".
	Stdin io.Reader
	// CUELimits bound the evaluation of each CUE manifest; the zero value
	// is cuelimit.Default.
	CUELimits cuelimit.Limits
	// MaxInputBytes bounds what Load reads in all: files, standard input
	// and what kustomizations include. Zero means
	// load.DefaultMaxInputBytes.
	MaxInputBytes int64
	// MaxAliasBytes bounds the bytes YAML aliases add to all documents
	// Load reads; 0 means load.DefaultMaxAliasBytes.
	MaxAliasBytes int64
}

// StdinPath is the path that stands for standard input, and StdinName the
// name diagnostics give it.
const (
	StdinPath = "-"
	StdinName = "stdin"
)

// Result is a loaded, checked project.
type Result struct {
	Config *project.Config
	// Set holds the objects of every unit. With one unit it is that unit's
	// set; with several, an object defined in more than one of them is
	// indexed once, as the first unit defines it.
	Set *model.Set
	// Units are the deploy units, each checked on its own: the plain
	// files first, then each kustomization no other one includes, by
	// directory.
	Units []*Unit
	// Skipped lists what the loader passed over, and why.
	Skipped []load.Skipped
	// Diagnostics are sorted and de-duplicated; the project is valid when
	// none of them is an error.
	Diagnostics diag.List
	// dir is the directory relative paths were taken from.
	dir string
}

// Unit is a set of objects that is deployed together, and so checked
// together: references, duplicates and loops are computed within a unit.
type Unit struct {
	// Kustomization is the kustomization's directory, as the user named
	// it, or "" for the plain files outside every kustomization.
	Kustomization string
	// Files are the files the unit's objects come from, as absolute
	// paths: the plain files, or every file the kustomization includes.
	Files []string
	Set   *model.Set
	// dir is the kustomization's directory, absolute, and patches the
	// files its patches come from: what a later stage needs to say which
	// overlay built an object.
	dir     string
	patches []string
}

// Name is how messages name the unit.
func (u *Unit) Name() string {
	if u.Kustomization == "" {
		return "the files outside kustomizations"
	}
	return "kustomization " + u.Kustomization
}

// Knative counts the unit's Knative objects.
func (u *Unit) Knative() int {
	return len(u.Set.Brokers) + len(u.Set.Triggers) + len(u.Set.Channels) + len(u.Set.Subscriptions)
}

// Valid reports whether no error was found; warnings leave it valid.
func (r *Result) Valid() bool { return !r.Diagnostics.HasErrors() }

// Load finds the config, loads and checks the manifests. The error is for
// I/O problems, and for a CUE manifest over opts.CUELimits (a
// *cuelimit.Exceeded: its evaluation goes on, so the program should exit);
// problems with the input are Diagnostics.
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
	budget := load.NewInputBudget(opts.MaxInputBytes, opts.MaxAliasBytes)
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
	var stdin bool
	var walk []string
	for i, p := range abs {
		if paths[i] == StdinPath {
			stdin = true
			continue
		}
		walk = append(walk, p)
	}
	in := &load.Inputs{}
	if len(walk) > 0 {
		var err error
		if in, err = load.Discover(load.Options{Paths: walk, Exclude: excludes, Base: base, Skip: skip, Root: base}); err != nil {
			return nil, err
		}
	}
	if len(opts.Exclude) > 0 {
		keep := func(f string) bool { return !load.Excluded(opts.Exclude, dir, f) }
		in.Files = slices.DeleteFunc(in.Files, func(f string) bool { return !keep(f) })
		in.Kustomizations = slices.DeleteFunc(in.Kustomizations, func(f string) bool { return !keep(f) })
	}
	res.Skipped = in.Skipped
	for i := range res.Skipped {
		res.Skipped[i].Path = diag.RelPath(dir, absPath(res.Skipped[i].Path))
	}

	// Render every kustomization found; those another one includes are
	// not units of their own, and neither are the files they read.
	var rendered []*kustomize.Rendered
	included := map[string]bool{}
	// includedByOther holds the kustomization files another build read.
	includedByOther := map[string]bool{}
	// A kustomization that another one names among its resources is
	// built as part of it, and need not be built alone: kustomize's cost
	// grows faster than the number of objects, so that matters.
	named := map[string]bool{}
	for _, k := range in.Kustomizations {
		for _, sub := range kustomize.Includes(k) {
			named[sub] = true
		}
	}
	// kustomize refuses a cycle of includes; knc says so, and does not
	// build what reaches one, so their files are neither built nor
	// passed over as if something had built them.
	cycleDiags, blocked := cycles(in.Kustomizations, dir)
	var diags diag.List
	diags = append(diags, cycleDiags...)
	for _, k := range in.Kustomizations {
		if named[absPath(k)] || blocked[absPath(k)] {
			continue
		}
		r, err := kustomize.Render(k, kustomize.Options{Root: sourceRoot(dir, k), RelativeTo: dir, CUELimits: opts.CUELimits, InputBudget: budget})
		if err != nil {
			return nil, err
		}
		// Nothing changes the rendered objects any more: keep them in
		// the form that takes a fifth of the memory, before the next
		// kustomization renders.
		for _, d := range r.Docs {
			d.Compact()
		}
		rendered = append(rendered, r)
		own := absPath(filepath.Join(dir, r.File))
		for _, f := range r.Read {
			included[f] = true
			if f != own {
				includedByOther[f] = true
			}
		}
	}
	var units []*Unit
	var kustDirs []string
	for _, k := range in.Kustomizations {
		kustDirs = append(kustDirs, absPath(k))
	}
	explicit := map[string]bool{}
	for _, p := range walk {
		explicit[absPath(p)] = true
	}
	var plain []string
	// notIncluded are files in a kustomization's directory that it does
	// not include, by that kustomization.
	notIncluded := map[string]string{}
	for _, f := range in.Files {
		af := absPath(f)
		if included[af] {
			continue
		}
		if !explicit[af] {
			if k := below(af, kustDirs); k != "" {
				if blocked[k] {
					res.Skipped = append(res.Skipped, load.Skipped{Path: diag.RelPath(dir, af), Reason: "in the directory of kustomization " + diag.RelPath(dir, k) + ", which is part of or includes a kustomization cycle"})
					continue
				}
				notIncluded[f] = k
				continue
			}
		}
		plain = append(plain, f)
	}
	skippedDiags, skipped, err := passedOver(notIncluded, dir, opts.CUELimits, budget)
	if err != nil {
		return nil, err
	}
	diags = append(diags, skippedDiags...)
	res.Skipped = append(res.Skipped, skipped...)
	var loaded *load.Loaded
	if len(plain) > 0 || stdin {
		var err error
		if loaded, err = load.ReadFiles(dir, plain, opts.CUELimits, budget); err != nil {
			return nil, err
		}
		if len(loaded.Docs) == 0 && len(loaded.Diags) == 0 && !stdin {
			// Tool configuration only: no unit.
			res.Skipped = append(res.Skipped, loaded.Skipped...)
			plain = nil
		}
	}
	if len(plain) > 0 || stdin {
		if stdin {
			data, err := readStdin(opts.Stdin, budget)
			if err != nil {
				return nil, err
			}
			fromStdin, err := load.Read([]load.Source{{Name: StdinName, Data: data}}, opts.CUELimits, budget)
			if err != nil {
				return nil, err
			}
			loaded.Docs = append(loaded.Docs, fromStdin.Docs...)
			loaded.Diags = append(loaded.Diags, fromStdin.Diags...)
			loaded.Skipped = append(loaded.Skipped, fromStdin.Skipped...)
		}
		res.Skipped = append(res.Skipped, loaded.Skipped...)
		set, checkDiags := check.Check(loaded.Docs, res.Config)
		diags = append(diags, loaded.Diags...)
		diags = append(diags, checkDiags...)
		files := make([]string, len(plain))
		for i, f := range plain {
			files[i] = absPath(f)
		}
		units = append(units, &Unit{Files: files, Set: set})
	}
	for _, r := range rendered {
		if includedByOther[absPath(filepath.Join(dir, r.File))] {
			continue
		}
		diags = append(diags, r.Diags...)
		if r.Diags.HasErrors() {
			continue
		}
		set, checkDiags := check.Check(r.Docs, res.Config)
		name := diag.RelPath(dir, absPath(r.Dir))
		diags = append(diags, inUnit(checkDiags, name, absPath(r.Dir), dir, r.Patches)...)
		units = append(units, &Unit{Kustomization: name, Files: r.Read, Set: set, dir: absPath(r.Dir), patches: r.Patches})
	}
	res.Units = units
	res.Set = merge(units)
	if !diags.HasErrors() {
		// Errors already say what is wrong with what was found.
		diags = append(diags, emptyPaths(paths, abs, dir, units)...)
	}
	slices.SortFunc(res.Skipped, func(a, b load.Skipped) int { return strings.Compare(a.Path, b.Path) })
	res.dir = dir
	res.Diagnostics = oncePerSharedFile(diags).Relative(dir).Sorted()
	return res, nil
}

// inUnit says, in diagnostics of a kustomization's objects, what the file
// they point at does not: which patch of which overlay set the field, or
// which kustomization built a base's object.
func inUnit(diags diag.List, name, kustDir, dir string, patches []string) diag.List {
	out := slices.Clone(diags)
	for i, d := range out {
		file := d.Pos.File
		if !filepath.IsAbs(file) {
			file = filepath.Join(dir, file)
		}
		switch {
		case slices.Contains(patches, d.Pos.File):
			out[i].Message += fmt.Sprintf(" (set by a patch of kustomization %s)", name)
		case below(file, []string{kustDir}) == "":
			out[i].Message += fmt.Sprintf(" (as built by kustomization %s)", name)
		}
	}
	return out
}

// emptyPaths warns about each path that holds no Knative object: a typo in
// a CI configuration's paths would otherwise pass unnoticed.
func emptyPaths(paths, abs []string, dir string, units []*Unit) diag.List {
	var diags diag.List
	for i, p := range abs {
		found := false
		for _, u := range units {
			if u.Knative() == 0 {
				continue
			}
			if paths[i] == StdinPath {
				found = found || slices.ContainsFunc(u.Set.Entries, func(e *model.Entry) bool { return e.Object != nil && e.Doc.File == StdinName })
				continue
			}
			ap := absPath(p)
			if u.Kustomization != "" {
				kd := absPath(inDir(dir, u.Kustomization))
				found = found || below(kd, []string{ap}) != "" || below(ap, []string{kd}) != ""
				continue
			}
			for _, e := range u.Set.Entries {
				if e.Object != nil && below(absPath(inDir(dir, e.Doc.File)), []string{ap}) != "" {
					found = true
					break
				}
			}
		}
		if !found {
			name := paths[i]
			if name == StdinPath {
				name = StdinName
			}
			diags.AddWarning(diag.Pos{File: name}, "", "no Knative Eventing object (Broker, Trigger, Channel, Subscription) found here; check the path, and run with -v to list the files passed over")
		}
	}
	return diags
}

// inDir returns file taken relative to dir; diagnostics keep files outside
// dir absolute, and those stay as they are.
func inDir(dir, file string) string {
	if filepath.IsAbs(file) {
		return file
	}
	return filepath.Join(dir, file)
}

// below returns the directory among dirs that file is, or lies below.
func below(file string, dirs []string) string {
	for _, d := range dirs {
		if file == d || strings.HasPrefix(file, d+string(filepath.Separator)) || d == string(filepath.Separator) {
			return d
		}
	}
	return ""
}

// sourceRoot is the directory a kustomization may read files from, as the
// root of a Flux source: the top of its git work tree, else the working
// directory when the kustomization lies below it.
func sourceRoot(dir, kustomization string) string {
	k := absPath(kustomization)
	for d := k; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	if below(k, []string{dir}) != "" {
		return dir
	}
	return k
}

// readStdin reads standard input, up to what remains of budget.
func readStdin(r io.Reader, budget *load.InputBudget) ([]byte, error) {
	if r == nil {
		r = os.Stdin
	}
	remaining := budget.Remaining()
	data, err := safeio.ReadAll(r, StdinName, remaining)
	if errors.Is(err, safeio.ErrTooLarge) {
		// Read no further than the budget, and say so as for files.
		return nil, budget.Charge(StdinName, remaining+1)
	}
	if err != nil {
		return nil, fmt.Errorf("reading standard input: %w", err)
	}
	if err := budget.Charge(StdinName, int64(len(data))); err != nil {
		return nil, err
	}
	return data, nil
}

// merge joins the units' sets.
func merge(units []*Unit) *model.Set {
	if len(units) == 1 {
		return units[0].Set
	}
	set := &model.Set{Index: map[model.Key]*model.Entry{}}
	for _, u := range units {
		set.Brokers = append(set.Brokers, u.Set.Brokers...)
		set.Triggers = append(set.Triggers, u.Set.Triggers...)
		set.Channels = append(set.Channels, u.Set.Channels...)
		set.Subscriptions = append(set.Subscriptions, u.Set.Subscriptions...)
		set.Entries = append(set.Entries, u.Set.Entries...)
		for k, e := range u.Set.Index {
			if _, ok := set.Index[k]; !ok {
				set.Index[k] = e
			}
		}
	}
	return set
}

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}
