package compiler

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/backend"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/compiler/render/argocd"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/internal/version"
)

// Output is what the render stage made: the files of a build, and the
// warnings about them.
type Output = render.Output

// OutputFile is one file of an Output.
type OutputFile = render.File

// Reference is a reference from one object to another, as the routes
// stage asks RouteOptions.Address to resolve it.
type Reference = model.KReference

// ImageRepository is where knc's runtime image is published.
const ImageRepository = render.ImageRepository

// DefaultImage is the runtime image of a knc version, and whether it is
// pinned to a digest.
func DefaultImage(v version.Info) (image string, pinned bool) { return render.DefaultImage(v) }

// RouteOptions say how the routes stage resolves addresses.
type RouteOptions struct {
	// Address, when set, makes the resolver asked first for the address
	// of every object a reference names (knc run's --address), given the
	// project's default namespace. Its error stops the pipeline.
	Address func(defaultNamespace string) (func(r *Reference) (string, bool), error)
}

// RenderOptions say how the render stage renders.
type RenderOptions struct {
	// Image is the runtime's container image; empty means knc.yaml's
	// runtime.image, then the version's default image.
	Image string
	// Version is the knc that builds.
	Version version.Info
	// Backends are the plugins that render what backs Brokers and
	// Channels; the caller hands them in so that the compiler never
	// imports its back ends.
	Backends backend.Provider
}

// compileRoutes is the routes stage: the routing table of each unit
// selected. What cannot be compiled goes to r.Later.
func (r *Result) compileRoutes(opts RouteOptions) error {
	var ropts routes.Options
	if opts.Address != nil {
		address, err := opts.Address(r.Config.DefaultNamespace)
		if err != nil {
			return err
		}
		ropts.Address = address
	}
	var diags diag.List
	for _, u := range r.Units {
		table, d := routes.CompileWith(u.Set, r.Config, ropts)
		u.Table = table
		diags = append(diags, d...)
	}
	if len(r.Units) == 1 {
		r.Table = r.Units[0].Table
	}
	r.Later = append(r.Later, diags...).Relative(r.dir).Sorted()
	return nil
}

// render is the render stage: the manifests of each unit selected. With
// one unit filling the output its files are as render.Render gives them;
// with several, each unit's files go under its OutputDir, in one output
// written as a whole. What stops the build goes to r.Later; warnings to
// r.Output.Warnings.
func (r *Result) render(opts RenderOptions) error {
	ropts := render.Options{Image: opts.Image, Version: opts.Version, Root: r.Root(), FS: r.fs, CUELimits: r.cueLimits, Backends: opts.Backends}
	if len(r.Units) == 0 {
		// Nothing to deploy: the build of an empty set.
		out, diags, err := render.Render(r.Set, r.Config, ropts)
		return r.rendered(out, diags, err)
	}
	if len(r.Units) == 1 && r.Units[0].OutputDir == "" {
		ropts.Table = r.Units[0].Table
		out, diags, err := render.Render(r.Units[0].Set, r.Config, ropts)
		return r.rendered(out, diags, err)
	}
	merged := &Output{}
	var diags diag.List
	// A unit's subdirectory inside another's, such as apps and apps/crds,
	// can put two files at one path.
	wrote := map[string]string{}
	for _, u := range r.Units {
		ropts.Table = u.Table
		out, d, err := render.Render(u.Set, r.Config, ropts)
		if err != nil {
			return fmt.Errorf("%s: %w", u.Name(), err)
		}
		diags = append(diags, d...)
		if out == nil {
			continue
		}
		merged.Warnings = append(merged.Warnings, out.Warnings...)
		for _, f := range out.Files {
			p := path.Join(u.OutputDir, f.Path)
			if other, ok := wrote[p]; ok {
				return fmt.Errorf("%s and %s would both write %s, as their subdirectories nest; build them one at a time, each with its own -o DIR", other, u.Name(), p)
			}
			wrote[p] = u.Name()
			merged.Files = append(merged.Files, OutputFile{Path: p, Data: f.Data})
		}
	}
	if len(diags) > 0 {
		r.Later = append(r.Later, diags...).Relative(r.dir).Sorted()
		return nil
	}
	// A warning both units give, such as an unpinned image, is said once.
	merged.Warnings = slices.CompactFunc(merged.Warnings.Relative(r.dir).Sorted(), func(a, b diag.Diagnostic) bool { return a.String() == b.String() })
	slices.SortFunc(merged.Files, func(a, b OutputFile) int { return strings.Compare(a.Path, b.Path) })
	r.Output = merged
	return nil
}

// rendered keeps what render.Render made of one unit.
func (r *Result) rendered(out *Output, diags diag.List, err error) error {
	if err != nil {
		return err
	}
	if len(diags) > 0 {
		r.Later = append(r.Later, diags...).Relative(r.dir).Sorted()
		return nil
	}
	out.Warnings = out.Warnings.Relative(r.dir)
	r.Output = out
	return nil
}

// Root is the project's root directory: that of knc.yaml, else the first
// path's directory.
func (r *Result) Root() string {
	if r.Config.File != "" {
		return filepath.Dir(r.Config.File)
	}
	root := "."
	if len(r.paths) > 0 && r.paths[0] != StdinPath {
		root = r.paths[0]
	}
	if isFile(inputfs.Or(r.fs), root) {
		root = filepath.Dir(root)
	}
	return root
}

// ArgoCDHealth is the argocd-cm patch, for Argo CD in namespace, that
// holds the health checks of the four kinds knc builds.
func ArgoCDHealth(namespace string) ([]byte, error) { return argocd.ConfigMapPatch(namespace) }
