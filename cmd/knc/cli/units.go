package cli

import (
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/plugins"
)

// plainUnitDir is the subdirectory of a build output that holds the build
// of the plain files, when they are one of several deploy units. The
// underscore keeps it apart from the directory of any kustomization a
// repository is likely to have; a clash is refused all the same.
const plainUnitDir = "_plain"

// rootUnitDir holds the build of a kustomization at the top of the paths
// given, when other units are built beside it: its own directory would be
// the output directory itself.
const rootUnitDir = "_root"

// unitOutput is a deploy unit to build, and where in the output directory
// its build goes.
type unitOutput struct {
	// name is the unit's name in messages, "" for the only unit.
	name string
	// dir is the slash-separated subdirectory of the output holding the
	// unit's build, "" when it is the only unit and fills the output.
	dir string
	set *model.Set
}

// outputUnits lists the deploy units a build writes into one output
// directory. With one unit holding Knative objects, that unit fills the
// directory as it always has. With several, each goes to a subdirectory
// named after the kustomization's directory, relative to the current
// directory (or, for a kustomization outside it, to the first path), so
// that a Flux Kustomization or an Argo CD Application per cluster can
// point at its own. Units with no Knative object are left aside, and
// listed with -v.
func outputUnits(res *compiler.Result, args []string, command string, flags *loadFlags) ([]unitOutput, error) {
	var withKnative []*compiler.Unit
	for _, u := range res.Units {
		if u.Knative() > 0 {
			withKnative = append(withKnative, u)
		}
	}
	if len(withKnative) <= 1 {
		one, err := singleUnit(res, command)
		if err != nil {
			return nil, err
		}
		return []unitOutput{{set: one.Set}}, nil
	}
	var out []unitOutput
	owner := map[string]string{}
	for _, u := range res.Units {
		if u.Knative() == 0 {
			if flags.verbose && flags.stderr != nil {
				fmt.Fprintf(flags.stderr, "knc: deploy unit %s holds no Knative object: not built\n", u.Name())
			}
			continue
		}
		dir, err := unitDir(u, args)
		if err != nil {
			return nil, err
		}
		if other, ok := owner[dir]; ok {
			return nil, usageError("%s and %s would both be built into the subdirectory %s; build them one at a time, each with its own -o DIR", other, u.Name(), dir)
		}
		owner[dir] = u.Name()
		out = append(out, unitOutput{name: u.Name(), dir: dir, set: u.Set})
	}
	slices.SortFunc(out, func(a, b unitOutput) int { return strings.Compare(a.dir, b.dir) })
	return out, nil
}

// unitDir is the subdirectory of the output a unit of several is built
// into.
func unitDir(u *compiler.Unit, args []string) (string, error) {
	if u.Kustomization == "" {
		return plainUnitDir, nil
	}
	dir := filepath.Clean(u.Kustomization)
	if !filepath.IsLocal(dir) {
		base := "."
		if len(args) > 0 && args[0] != compiler.StdinPath {
			base = args[0]
		}
		absBase, err := filepath.Abs(base)
		if err != nil {
			return "", err
		}
		absDir, err := filepath.Abs(dir)
		if err != nil {
			return "", err
		}
		rel, err := filepath.Rel(absBase, absDir)
		if err != nil || !filepath.IsLocal(rel) && rel != "." {
			return "", usageError("%s is outside both the current directory and %s, so it has no subdirectory in the output; build it on its own, with its own -o DIR", u.Name(), base)
		}
		dir = rel
	}
	if dir == "." {
		return rootUnitDir, nil
	}
	return filepath.ToSlash(dir), nil
}

// renderUnits builds each unit. With one unit its output is returned as
// render.Render gives it; with several, the files of each are put under
// its subdirectory, in one output written as a whole. Diagnostics and
// warnings are relative to the current directory. The back ends are knc's
// plugins.
func renderUnits(units []unitOutput, res *compiler.Result, opts render.Options) (*render.Output, diag.List, error) {
	opts.Backends = plugins.Backends
	wd, wdErr := os.Getwd()
	relative := func(l diag.List) diag.List {
		if wdErr == nil {
			return l.Relative(wd)
		}
		return l
	}
	if len(units) == 1 && units[0].dir == "" {
		out, diags, err := render.Render(units[0].set, res.Config, opts)
		if err != nil || len(diags) > 0 {
			return nil, relative(diags).Sorted(), err
		}
		out.Warnings = relative(out.Warnings)
		return out, nil, nil
	}
	merged := &render.Output{}
	var diags diag.List
	// A unit's subdirectory inside another's, such as apps and apps/crds,
	// can put two files at one path.
	wrote := map[string]string{}
	for _, u := range units {
		out, d, err := render.Render(u.set, res.Config, opts)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", u.name, err)
		}
		diags = append(diags, d...)
		if out == nil {
			continue
		}
		merged.Warnings = append(merged.Warnings, out.Warnings...)
		for _, f := range out.Files {
			p := path.Join(u.dir, f.Path)
			if other, ok := wrote[p]; ok {
				return nil, nil, fmt.Errorf("%s and %s would both write %s, as their subdirectories nest; build them one at a time, each with its own -o DIR", other, u.name, p)
			}
			wrote[p] = u.name
			merged.Files = append(merged.Files, render.File{Path: p, Data: f.Data})
		}
	}
	if len(diags) > 0 {
		return nil, relative(diags).Sorted(), nil
	}
	// A warning both units give, such as an unpinned image, is said once.
	merged.Warnings = slices.CompactFunc(relative(merged.Warnings).Sorted(), func(a, b diag.Diagnostic) bool { return a.String() == b.String() })
	slices.SortFunc(merged.Files, func(a, b render.File) int { return strings.Compare(a.Path, b.Path) })
	return merged, nil, nil
}

// unitOf names the unit whose subdirectory holds file (slash-separated,
// relative to the output directory), the deepest one when units nest; nil
// when no unit's does.
func unitOf(units []unitOutput, file string) *unitOutput {
	var best *unitOutput
	for i := range units {
		u := &units[i]
		if u.dir == "" || strings.HasPrefix(file, u.dir+"/") {
			if best == nil || len(u.dir) > len(best.dir) {
				best = u
			}
		}
	}
	return best
}
