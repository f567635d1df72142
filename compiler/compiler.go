// Package compiler is knc's compile pipeline. Build runs its stages, which
// pipeline.go lists in order: it finds the project config, builds the
// deploy units, checks them into a model, applies the policies, selects
// the units a command needs, compiles their routing tables and renders
// them. Every command (validate, build, diff, graph, route, test, run) and
// every revision diff --base reads goes through Build, so none re-reads
// files or re-runs a stage its own way.
//
// The stages read their input through one file system (internal/inputfs):
// the disk, or the fs.FS of Options.FS, such as a git revision read from
// git's objects (package diff) or a test's fstest.MapFS. A new input
// source is an fs.FS, with fs.ReadLinkFS for its links; a stage that
// reads a file takes the source's file system rather than calling os, so
// that links, size limits and file names hold whatever the input is.
//
// The compiler must not import the runtime's engine; the routing table
// (internal/routing) is the one contract between the two.
package compiler

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/routing"
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
	// process's working directory, or with FS its top.
	Dir string
	// FS, when set, is what the build reads instead of the disk: a
	// project or repository whose top is the top of FS, such as an
	// fstest.MapFS or a git revision. Dir is then a slash-separated path
	// in FS, and Paths, ConfigFile, Exclude and Policies.Dirs are taken
	// relative to Dir, or from the top of FS when they start with a
	// slash. No stage touches the disk; files read as they would on a
	// disk at FSMount, so that diagnostics name them relative to Dir as
	// for a build from the disk, and Unit.Files are paths below FSMount.
	// Symbolic links are FS's own (fs.ReadLinkFS), held to the same
	// rules as on the disk: a link out of FS leads to nothing.
	FS fs.FS
	// FSMount is the absolute directory where the build sees the top of
	// FS; empty means DefaultFSMount. A file outside Dir is named by its
	// path there, which a caller can then rename.
	FSMount string
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

	// Policies, when set, runs the policies stage.
	Policies *Policies
	// Strict makes the warnings of the stages up to policies errors.
	Strict bool
	// Select says which units the stages after the checks work on.
	Select Selection
	// Command names the command in messages about the selection, such
	// as "build" in "knc build PATH".
	Command string
	// Routes, when set, runs the routes stage.
	Routes *RouteOptions
	// Render, when set, runs the render stage.
	Render *RenderOptions
	// After, when set, is called after each stage that ran, with the
	// result so far: a program reports progress with it, as knc -v lists
	// the deploy units once the check stage has found them.
	After func(Stage, *Result)
}

// exclude is Exclude with the directories of the policies, whose .cue
// files are policies rather than objects.
func (o Options) exclude() []string {
	if o.Policies == nil {
		return o.Exclude
	}
	return append(slices.Clip(o.Exclude), o.Policies.exclude()...)
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
	// Diagnostics are what the stages up to policies found, sorted and
	// de-duplicated; the project is valid when none of them is an error.
	Diagnostics diag.List
	// Later are what the routes and render stages found, sorted. They
	// run only over a valid project.
	Later diag.List
	// Stopped names the stage whose errors stopped the pipeline, "" when
	// none did.
	Stopped Stage
	// Table is the routing table of the one unit selected, when the
	// routes stage ran and one unit was selected.
	Table *routing.Table
	// Output is what the render stage rendered.
	Output *Output
	// LeftAside are the units with no Knative object that an EachUnit
	// selection left out of the build.
	LeftAside []*Unit
	// cueLimits bound each CUE evaluation of the later stages.
	cueLimits cuelimit.Limits
	// dir is the directory relative paths were taken from, paths the
	// paths as given, or with Options.FS as they lie in it.
	dir   string
	paths []string
	// fs is what the build read.
	fs inputfs.FS
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
	// OutputDir is the slash-separated subdirectory of a build's output
	// that holds the unit's build, when Options.Select is EachUnit and
	// several units have Knative objects; "" otherwise.
	OutputDir string
	// Table is the unit's routing table, once the routes stage ran.
	Table *routing.Table
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
	return len(u.Set.Brokers) + len(u.Set.Triggers) + len(u.Set.Channels) + len(u.Set.Subscriptions) +
		len(u.Set.Sources) + len(u.Set.Sequences) + len(u.Set.Parallels)
}

// Valid reports whether no error was found; warnings leave it valid.
func (r *Result) Valid() bool { return !r.Diagnostics.HasErrors() }

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
			diags.AddWarning(diag.Pos{File: name}, "", "no Knative Eventing object (Broker, Trigger, Channel, Subscription, event source, Sequence, Parallel) found here; check the path, and run with -v to list the files passed over")
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
func sourceRoot(fsys inputfs.FS, dir, kustomization string) string {
	k := absPath(kustomization)
	for d := k; ; d = filepath.Dir(d) {
		if _, err := fsys.Stat(filepath.Join(d, ".git")); err == nil {
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

// workingDir is the process's working directory, where relative paths
// start when Options.Dir is empty.
func workingDir() (string, error) { return os.Getwd() }

// isFile reports whether p exists in fsys and is not a directory.
func isFile(fsys inputfs.FS, p string) bool {
	info, err := fsys.Stat(p)
	return err == nil && !info.IsDir()
}

// isDir reports whether p is a directory of fsys.
func isDir(fsys inputfs.FS, p string) bool {
	info, err := fsys.Stat(p)
	return err == nil && info.IsDir()
}

// DefaultFSMount is where a build over Options.FS sees the top of FS,
// unless Options.FSMount says otherwise.
const DefaultFSMount = string(filepath.Separator)

func absPath(p string) string {
	a, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	return a
}
