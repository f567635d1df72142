package compiler

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/check"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/flows"
	"github.com/knc-dev/knc/compiler/kustomize"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/inputfs"
)

// Stage names a step of the pipeline Build runs.
type Stage string

// The stages, in the order Build runs them. Each takes what the one before
// made. The checks and the policies both look at all the input, so that
// one run reports all that is wrong with it; an error there, or in a later
// stage, stops the pipeline, so that no stage after the policies works on
// what an earlier one refused.
const (
	// StageConfig finds knc.yaml and reads it.
	StageConfig Stage = "config"
	// StageDiscover walks the paths for manifest files and
	// kustomizations.
	StageDiscover Stage = "discover"
	// StageKustomize builds every kustomization no other one includes:
	// each is a deploy unit. The files outside kustomizations are one
	// more unit.
	StageKustomize Stage = "kustomize"
	// StageDecode reads the files outside kustomizations, and standard
	// input, into documents.
	StageDecode Stage = "decode"
	// StageCheck decodes each unit's documents into typed objects, sets
	// their defaults and checks them, each unit on its own. The three go
	// together per object (package check), so that each check sees the
	// defaults Knative's admission would have set.
	StageCheck Stage = "check"
	// StagePolicies checks each unit against the project's CUE
	// policies; it runs when Options.Policies is set.
	StagePolicies Stage = "policies"
	// StageFlows compiles each unit's Sequences and Parallels into the
	// Channels and Subscriptions Knative's flows controllers would create
	// (package flows), added to the unit's set beside the repository's
	// own, so that every command after it sees them.
	StageFlows Stage = "flows"
	// StageSelect picks the units a command works on (Options.Select).
	StageSelect Stage = "select"
	// StageRoutes compiles the routing table of each unit selected; it
	// runs when Options.Routes is set.
	StageRoutes Stage = "routes"
	// StageRender renders the manifests of the units selected; it runs
	// when Options.Render is set.
	StageRender Stage = "render"
)

// Stages lists the stages in order.
//
// A new stage takes what the stage before it made and leaves its result
// in the Result: its own field, and its problems in Diagnostics (up to
// the policies) or Later (after the selection). It gets an Options field
// of its own when a command turns it on or tunes it, a constant here, and
// its call in Build between the stages it sits between; Build's After
// hook then reports it too. It reads no flags and prints nothing: the
// program passes what it needs in Options.
var Stages = []Stage{StageConfig, StageDiscover, StageKustomize, StageDecode, StageCheck, StagePolicies, StageFlows, StageSelect, StageRoutes, StageRender}

// Build runs the pipeline over the project opts describes: config,
// discover, kustomize, decode, check, policies, flows, select, routes and
// render
// (see Stages). Every command compiles through it, the work tree and a git
// revision (package diff) alike.
//
// Problems with the input are diagnostics in the Result; Result.Stopped
// names the stage whose errors stopped the pipeline. The error is for I/O
// problems, for a CUE evaluation over opts.CUELimits (a
// *cuelimit.Exceeded: its evaluation goes on, so the program should exit),
// for a cancelled ctx, and for units the selection cannot satisfy (a
// *SelectError, returned with the Result of the stages before).
func Build(ctx context.Context, opts Options) (*Result, error) {
	src, err := locate(opts)
	if err != nil {
		return nil, err
	}
	res := &Result{Config: project.Default(), dir: src.dir, paths: src.paths, fs: src.fs, cueLimits: opts.CUELimits}
	if opts.FS != nil {
		// No working directory to take the paths from.
		res.paths = src.abs
	}
	stage := func(name Stage, run func() error) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		if err := run(); err != nil {
			return err
		}
		if opts.After != nil {
			opts.After(name, res)
		}
		return nil
	}
	if err := stage(StageConfig, func() error { return readConfig(src, res) }); err != nil || res.Stopped != "" {
		return res, err
	}
	var found *discovered
	if err := stage(StageDiscover, func() (err error) { found, err = discover(src, res, opts); return err }); err != nil {
		return nil, err
	}
	var built *deployUnits
	if err := stage(StageKustomize, func() (err error) { built, err = kustomizeUnits(src, found, res, opts); return err }); err != nil {
		return nil, err
	}
	if err := stage(StageDecode, func() error { return decode(src, found, built, res, opts) }); err != nil {
		return nil, err
	}
	if err := stage(StageCheck, func() error { checkUnits(src, built, res); return nil }); err != nil {
		return nil, err
	}
	// The policies run over what the checks refused too, so that one run
	// reports all that is wrong with the input.
	last := StageCheck
	if opts.Policies != nil {
		if err := stage(StagePolicies, func() error { return res.checkPolicies(opts) }); err != nil {
			return nil, err
		}
		last = StagePolicies
	}
	if opts.Strict {
		// Warnings are errors from here on, at whichever stage found
		// them.
		res.Diagnostics = res.Diagnostics.Strict()
	}
	if res.stopAt(last) {
		return res, nil
	}
	if err := stage(StageFlows, func() error { res.expandFlows(); return nil }); err != nil {
		return nil, err
	}
	if res.stopAt(StageFlows) {
		return res, nil
	}
	if err := stage(StageSelect, func() error { return res.selectUnits(opts) }); err != nil {
		return res, err
	}
	// The render stage writes the tables the routes stage compiled, so a
	// build runs it even when no command asked for its options.
	if opts.Routes == nil && opts.Render != nil {
		opts.Routes = &RouteOptions{}
	}
	if opts.Routes != nil {
		if err := stage(StageRoutes, func() error { return res.compileRoutes(*opts.Routes) }); err != nil {
			return res, err
		}
		if res.stopAt(StageRoutes) {
			return res, nil
		}
	}
	if opts.Render != nil {
		if err := stage(StageRender, func() error { return res.render(*opts.Render) }); err != nil {
			return res, err
		}
		res.stopAt(StageRender)
	}
	return res, nil
}

// Load runs the pipeline as far as opts asks, without a context: what it
// asks by default is up to the checks.
func Load(opts Options) (*Result, error) {
	return Build(context.Background(), opts)
}

// stopAt records that the pipeline stopped at s when what the stages so
// far found holds an error, and reports whether it did.
func (r *Result) stopAt(s Stage) bool {
	if r.Stopped == "" && (r.Diagnostics.HasErrors() || r.Later.HasErrors()) {
		r.Stopped = s
	}
	return r.Stopped != ""
}

// source is where a build reads from: the paths, the directory relative
// paths are taken from, and the project config.
type source struct {
	// dir is the directory relative paths are taken from.
	dir string
	// paths are the paths as given, abs the same made absolute, or
	// left relative to the working directory when they were.
	paths, abs []string
	// cfgFile is knc.yaml, "" when the project has none.
	cfgFile string
	budget  *load.InputBudget
	// fs is what the build reads.
	fs inputfs.FS
}

// locate finds where the build reads from: the paths and knc.yaml.
func locate(opts Options) (*source, error) {
	if opts.FS != nil {
		return locateInFS(opts)
	}
	dir := opts.Dir
	if dir == "" {
		wd, err := workingDir()
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
		if isFile(inputfs.Disk, start) {
			start = filepath.Dir(start)
		}
		found, err := project.Find(inputfs.Disk, start)
		if err != nil {
			return nil, err
		}
		cfgFile = found
	}
	return &source{dir: dir, paths: paths, abs: abs, cfgFile: cfgFile, budget: load.NewInputBudget(opts.MaxInputBytes, opts.MaxAliasBytes), fs: inputfs.Disk}, nil
}

// locateInFS is locate for a build over opts.FS, seen at its mount: every
// path is made absolute there, as no working directory is involved.
func locateInFS(opts Options) (*source, error) {
	mount := cmp.Or(opts.FSMount, DefaultFSMount)
	if !filepath.IsAbs(mount) {
		return nil, fmt.Errorf("FSMount %q is not an absolute directory", mount)
	}
	fsys := inputfs.Mount(opts.FS, mount)
	dir := inFS(mount, mount, opts.Dir)
	paths := opts.Paths
	if len(paths) == 0 {
		paths = []string{"."}
	}
	abs := make([]string, len(paths))
	for i, p := range paths {
		abs[i] = p
		if p != StdinPath {
			abs[i] = inFS(mount, dir, p)
		}
	}
	var cfgFile string
	if opts.ConfigFile != "" {
		cfgFile = inFS(mount, dir, opts.ConfigFile)
	} else {
		start := abs[0]
		if isFile(fsys, start) {
			start = filepath.Dir(start)
		}
		found, err := project.Find(fsys, start)
		if err != nil {
			return nil, err
		}
		cfgFile = found
	}
	return &source{dir: dir, paths: paths, abs: abs, cfgFile: cfgFile, budget: load.NewInputBudget(opts.MaxInputBytes, opts.MaxAliasBytes), fs: fsys}, nil
}

// inFS is the slash-separated path p of Options.FS, relative to dir or,
// starting with a slash, to the top, as a path below mount.
func inFS(mount, dir, p string) string {
	if path.IsAbs(p) {
		return filepath.Join(mount, filepath.FromSlash(p))
	}
	return filepath.Join(dir, filepath.FromSlash(p))
}

// readConfig is the config stage: it reads knc.yaml into res.Config, or
// stops at its mistakes.
func readConfig(src *source, res *Result) error {
	if src.cfgFile == "" {
		return nil
	}
	cfg, diags, err := project.Read(src.fs, src.cfgFile)
	if err != nil {
		return fmt.Errorf("reading project config: %w", err)
	}
	if len(diags) > 0 {
		res.Diagnostics = diags.Relative(src.dir).Sorted()
		res.Set = &model.Set{Index: map[model.Key]*model.Entry{}}
		res.Stopped = StageConfig
		return nil
	}
	res.Config = cfg
	return nil
}

// discovered is what the discover stage found below the paths.
type discovered struct {
	*load.Inputs
	// walk are the paths walked, stdin whether "-" was among them.
	walk  []string
	stdin bool
}

// discover is the discover stage: it walks the paths, leaving out what
// knc.yaml and opts exclude.
func discover(src *source, res *Result, opts Options) (*discovered, error) {
	var excludes []string
	base := src.dir
	var skip []string
	if src.cfgFile != "" {
		base = filepath.Dir(src.cfgFile)
		excludes = append(excludes, res.Config.Exclude...)
		skip = []string{filepath.Clean(src.cfgFile)}
	}
	found := &discovered{Inputs: &load.Inputs{}}
	for i, p := range src.abs {
		if src.paths[i] == StdinPath {
			found.stdin = true
			continue
		}
		found.walk = append(found.walk, p)
	}
	if len(found.walk) > 0 {
		in, err := load.Discover(load.Options{Paths: found.walk, Exclude: excludes, Base: base, Skip: skip, Root: base, FS: src.fs})
		if err != nil {
			return nil, err
		}
		found.Inputs = in
	}
	if exclude := opts.exclude(); len(exclude) > 0 {
		keep := func(f string) bool { return !load.Excluded(exclude, src.dir, f) }
		found.Files = slices.DeleteFunc(found.Files, func(f string) bool { return !keep(f) })
		found.Kustomizations = slices.DeleteFunc(found.Kustomizations, func(f string) bool { return !keep(f) })
	}
	res.Skipped = found.Skipped
	for i := range res.Skipped {
		res.Skipped[i].Path = diag.RelPath(src.dir, absPath(res.Skipped[i].Path))
	}
	return found, nil
}

// deployUnits is what the kustomize stage made: the kustomizations built,
// and the files outside every kustomization, which the decode stage reads.
type deployUnits struct {
	rendered []*kustomize.Rendered
	// includedByOther holds the kustomization files another build read:
	// those kustomizations are not units of their own.
	includedByOther map[string]bool
	// plain are the files outside every kustomization.
	plain []string
	// diags are what the stage found: kustomization cycles, and Knative
	// objects in a kustomization's directory it does not include.
	diags diag.List
	// decoded is the unit of the plain files and standard input, once
	// the decode stage has read them; nil when there is none.
	decoded *plainUnit
}

// kustomizeUnits is the kustomize stage: it builds every kustomization
// found that no other one includes, and sorts the files found into those
// a build read, those outside every kustomization, and those in a
// kustomization's directory that it leaves out.
func kustomizeUnits(src *source, found *discovered, res *Result, opts Options) (*deployUnits, error) {
	dir := src.dir
	built := &deployUnits{includedByOther: map[string]bool{}}
	included := map[string]bool{}
	// A kustomization that another one names among its resources is
	// built as part of it, and need not be built alone: kustomize's cost
	// grows faster than the number of objects, so that matters.
	named := map[string]bool{}
	for _, k := range found.Kustomizations {
		for _, sub := range kustomize.Includes(src.fs, k) {
			named[sub] = true
		}
	}
	// kustomize refuses a cycle of includes; knc says so, and does not
	// build what reaches one, so their files are neither built nor
	// passed over as if something had built them.
	cycleDiags, blocked := cycles(src.fs, found.Kustomizations, dir)
	built.diags = append(built.diags, cycleDiags...)
	for _, k := range found.Kustomizations {
		if named[absPath(k)] || blocked[absPath(k)] {
			continue
		}
		r, err := kustomize.Render(k, kustomize.Options{Root: sourceRoot(src.fs, dir, k), RelativeTo: dir, CUELimits: opts.CUELimits, InputBudget: src.budget, FS: src.fs})
		if err != nil {
			return nil, err
		}
		// Nothing changes the rendered objects any more: keep them in
		// the form that takes a fifth of the memory, before the next
		// kustomization renders.
		for _, d := range r.Docs {
			d.Compact()
		}
		built.rendered = append(built.rendered, r)
		own := absPath(filepath.Join(dir, r.File))
		for _, f := range r.Read {
			included[f] = true
			if f != own {
				built.includedByOther[f] = true
			}
		}
	}
	var kustDirs []string
	for _, k := range found.Kustomizations {
		kustDirs = append(kustDirs, absPath(k))
	}
	explicit := map[string]bool{}
	for _, p := range found.walk {
		explicit[absPath(p)] = true
	}
	// notIncluded are files in a kustomization's directory that it does
	// not include, by that kustomization.
	notIncluded := map[string]string{}
	for _, f := range found.Files {
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
		built.plain = append(built.plain, f)
	}
	skippedDiags, skipped, err := passedOver(src.fs, notIncluded, dir, opts.CUELimits, src.budget)
	if err != nil {
		return nil, err
	}
	built.diags = append(built.diags, skippedDiags...)
	res.Skipped = append(res.Skipped, skipped...)
	return built, nil
}

// plainUnit is the unit of the files outside kustomizations, as the decode
// stage read them.
type plainUnit struct {
	files  []string
	loaded *load.Loaded
}

// decode is the decode stage: it reads the files outside kustomizations,
// and standard input, into documents. Files that hold tool configuration
// only make no unit.
func decode(src *source, found *discovered, built *deployUnits, res *Result, opts Options) error {
	plain := built.plain
	if len(plain) == 0 && !found.stdin {
		return nil
	}
	loaded, err := load.ReadFiles(src.fs, src.dir, plain, opts.CUELimits, src.budget)
	if err != nil {
		return err
	}
	if len(loaded.Docs) == 0 && len(loaded.Diags) == 0 && !found.stdin {
		// Tool configuration only: no unit.
		res.Skipped = append(res.Skipped, loaded.Skipped...)
		return nil
	}
	if found.stdin {
		data, err := readStdin(opts.Stdin, src.budget)
		if err != nil {
			return err
		}
		fromStdin, err := load.Read([]load.Source{{Name: StdinName, Data: data}}, opts.CUELimits, src.budget)
		if err != nil {
			return err
		}
		loaded.Docs = append(loaded.Docs, fromStdin.Docs...)
		loaded.Diags = append(loaded.Diags, fromStdin.Diags...)
		loaded.Skipped = append(loaded.Skipped, fromStdin.Skipped...)
	}
	res.Skipped = append(res.Skipped, loaded.Skipped...)
	files := make([]string, len(plain))
	for i, f := range plain {
		files[i] = absPath(f)
	}
	built.decoded = &plainUnit{files: files, loaded: loaded}
	return nil
}

// expandFlows is the flows stage: each unit's Sequences and Parallels
// become the Channels and Subscriptions they are made of. It runs after
// the policies, which judge what the repository holds, and before the
// selection, so that validate reports a name a flow's objects would take.
func (r *Result) expandFlows() {
	var diags diag.List
	for _, u := range r.Units {
		if len(u.Set.Sequences) == 0 && len(u.Set.Parallels) == 0 {
			continue
		}
		d := flows.Expand(u.Set)
		if u.Kustomization != "" {
			d = inUnit(d, u.Kustomization, u.dir, r.dir, u.patches)
		}
		diags = append(diags, d...)
	}
	r.Set = merge(r.Units)
	if len(diags) > 0 {
		r.Diagnostics = append(r.Diagnostics, oncePerSharedFile(diags).Relative(r.dir)...).Sorted()
	}
}

// checkUnits is the check stage: each unit's documents become typed
// objects, defaulted and checked within their unit. A diagnostic in a file
// several overlays share is one, naming each overlay.
func checkUnits(src *source, built *deployUnits, res *Result) {
	dir := src.dir
	diags := built.diags
	var units []*Unit
	if p := built.decoded; p != nil {
		set, checkDiags := check.Check(p.loaded.Docs, res.Config)
		diags = append(diags, p.loaded.Diags...)
		diags = append(diags, checkDiags...)
		units = append(units, &Unit{Files: p.files, Set: set})
	}
	for _, r := range built.rendered {
		if built.includedByOther[absPath(filepath.Join(dir, r.File))] {
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
		diags = append(diags, emptyPaths(src.paths, src.abs, dir, units)...)
	}
	slices.SortFunc(res.Skipped, func(a, b load.Skipped) int { return strings.Compare(a.Path, b.Path) })
	res.Diagnostics = oncePerSharedFile(diags).Relative(dir).Sorted()
}
