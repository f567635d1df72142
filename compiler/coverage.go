package compiler

import (
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/kustomize"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
)

// A merge gate must check every object a repository holds. These rules
// make sure no file is passed over silently: a kustomization cycle is an
// error, and so is a Knative object that no kustomization deploys.

// cycles reports each include cycle that the kustomizations reach as an
// error at the entry that closes it, and returns the kustomizations that
// are part of one or include one: kustomize refuses to build them.
func cycles(fsys inputfs.FS, kustomizations []string, dir string) (diag.List, map[string]bool) {
	found := kustomize.Cycles(fsys, kustomizations)
	blocked := map[string]bool{}
	if len(found) == 0 {
		return nil, blocked
	}
	var diags diag.List
	inCycle := map[string]bool{}
	for _, c := range found {
		names := make([]string, 0, len(c.Dirs)+1)
		for _, d := range c.Dirs {
			names = append(names, diag.RelPath(dir, d))
			inCycle[d] = true
		}
		names = append(names, names[0])
		what := "kustomization cycle: " + strings.Join(names, " includes ")
		if len(c.Dirs) == 1 {
			what = "kustomization " + names[0] + " includes itself"
		}
		diags.Add(diag.Pos{File: diag.RelPath(dir, c.File()), Line: c.Line, Column: c.Column}, "",
			"%s; kustomize refuses to build it, so knc cannot check the objects it deploys: remove the include that closes the cycle", what)
	}
	// A kustomization that reaches a cycle cannot be built either.
	reaches := map[string]bool{}
	var reach func(d string, seen map[string]bool) bool
	reach = func(d string, seen map[string]bool) bool {
		if inCycle[d] {
			return true
		}
		if r, ok := reaches[d]; ok {
			return r
		}
		if seen[d] {
			return false
		}
		seen[d] = true
		r := slices.ContainsFunc(kustomize.Includes(fsys, d), func(sub string) bool { return reach(filepath.Clean(sub), seen) })
		reaches[d] = r
		return r
	}
	for _, k := range kustomizations {
		a := absPath(k)
		if reach(a, map[string]bool{}) {
			blocked[a] = true
		}
	}
	return diags, blocked
}

// passedOver reads the files that lie in a kustomization's directory
// which does not include them (by kustomization, as absolute paths). A
// file holding a Knative object is an error, since neither kustomize
// nor knc would ever see it; the others are skipped, as before.
func passedOver(fsys inputfs.FS, files map[string]string, dir string, limits cuelimit.Limits, budget *load.InputBudget) (diag.List, []load.Skipped, error) {
	if len(files) == 0 {
		return nil, nil, nil
	}
	names := slices.Sorted(maps.Keys(files))
	loaded, err := load.ReadFiles(fsys, dir, names, limits, budget)
	if err != nil {
		return nil, nil, err
	}
	byAbs := make(map[string]string, len(files))
	for f, k := range files {
		byAbs[absPath(f)] = k
	}
	var diags diag.List
	holds := map[string]bool{}
	for _, d := range loaded.Docs {
		if !isKnative(d.APIVersion) {
			continue
		}
		file := absPath(inDir(dir, d.File))
		holds[file] = true
		k := diag.RelPath(dir, byAbs[file])
		diags.Add(d.PosOf(""), "",
			"%s %s is in the directory of kustomization %s, which does not include it, so it is never deployed and knc does not check it: add %s to that kustomization's resources, or exclude it in knc.yaml",
			d.Kind, d.Name, k, filepath.Base(d.File))
	}
	var skipped []load.Skipped
	for _, f := range names {
		af := absPath(f)
		if holds[af] {
			continue
		}
		skipped = append(skipped, load.Skipped{Path: diag.RelPath(dir, af), Reason: "in the directory of kustomization " + diag.RelPath(dir, files[f]) + ", which does not include it"})
	}
	return diags, skipped, nil
}

// isKnative reports whether apiVersion belongs to one of Knative's API
// groups.
func isKnative(apiVersion string) bool {
	group, _, ok := strings.Cut(apiVersion, "/")
	return ok && strings.HasSuffix(group, ".knative.dev")
}
