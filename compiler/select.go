package compiler

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Selection says which deploy units the stages after the checks work on.
type Selection int

const (
	// AllUnits keeps every unit: validate, test and diff --base look at
	// each.
	AllUnits Selection = iota
	// OneUnit needs one unit: graph, run and a build to standard output.
	// Units with no Knative object are left aside when exactly one unit
	// has some; several are refused, naming them.
	OneUnit
	// EachUnit builds each unit with Knative objects into a subdirectory
	// of its own (Unit.OutputDir) when there are several: a build into
	// a directory, and diff --against.
	EachUnit
)

// PlainUnitDir is the subdirectory of a build output that holds the build
// of the plain files, when they are one of several deploy units. The
// underscore keeps it apart from the directory of any kustomization a
// repository is likely to have; a clash is refused all the same.
const PlainUnitDir = "_plain"

// RootUnitDir holds the build of a kustomization at the top of the paths
// given, when other units are built beside it: its own directory would be
// the output directory itself.
const RootUnitDir = "_root"

// SelectError is units a selection cannot satisfy, such as several units
// where a command needs one. Its message says what to run instead.
type SelectError struct{ msg string }

func (e *SelectError) Error() string { return e.msg }

func selectError(format string, args ...any) error {
	return &SelectError{msg: fmt.Sprintf(format, args...)}
}

// selectUnits is the select stage: it narrows r.Units (and r.Set) to the
// units opts.Select asks for.
func (r *Result) selectUnits(opts Options) error {
	switch opts.Select {
	case OneUnit:
		return r.one(opts.Command)
	case EachUnit:
		return r.each(opts.Command)
	}
	return nil
}

// withKnative are the units that hold a Knative object.
func (r *Result) withKnative() []*Unit {
	var out []*Unit
	for _, u := range r.Units {
		if u.Knative() > 0 {
			out = append(out, u)
		}
	}
	return out
}

// one narrows r to the one deploy unit a command needs.
func (r *Result) one(command string) error {
	if len(r.Units) <= 1 {
		return nil
	}
	withKnative := r.withKnative()
	if len(withKnative) == 1 {
		r.Units = withKnative
		r.Set = withKnative[0].Set
		return nil
	}
	var names []string
	example := "PATH"
	for _, u := range withKnative {
		names = append(names, u.Name())
		if u.Kustomization != "" {
			example = u.Kustomization
		}
	}
	more := ""
	if command == "build" {
		more = ", or write each into a subdirectory of its own with -o DIR"
	}
	return selectError("the paths hold %d deploy units, each deployed on its own: %s; %s one at a time, such as knc %s %s%s",
		len(withKnative), strings.Join(names, ", "), command, command, example, more)
}

// each gives every unit with Knative objects its subdirectory of the
// output, when there are several. Each goes to a subdirectory named after
// the kustomization's directory, relative to the current directory (or,
// for a kustomization outside it, to the first path), so that a Flux
// Kustomization or an Argo CD Application per cluster can point at its
// own. Units with no Knative object are left aside, in r.LeftAside.
func (r *Result) each(command string) error {
	withKnative := r.withKnative()
	if len(withKnative) <= 1 {
		return r.one(command)
	}
	owner := map[string]string{}
	for _, u := range r.Units {
		if u.Knative() == 0 {
			r.LeftAside = append(r.LeftAside, u)
			continue
		}
		dir, err := r.outputDir(u)
		if err != nil {
			return err
		}
		if other, ok := owner[dir]; ok {
			return selectError("%s and %s would both be built into the subdirectory %s; build them one at a time, each with its own -o DIR", other, u.Name(), dir)
		}
		owner[dir] = u.Name()
		u.OutputDir = dir
	}
	slices.SortFunc(withKnative, func(a, b *Unit) int { return strings.Compare(a.OutputDir, b.OutputDir) })
	r.Units = withKnative
	return nil
}

// outputDir is the subdirectory of the output a unit of several is built
// into.
func (r *Result) outputDir(u *Unit) (string, error) {
	if u.Kustomization == "" {
		return PlainUnitDir, nil
	}
	dir := filepath.Clean(u.Kustomization)
	if !filepath.IsLocal(dir) {
		base := "."
		if len(r.paths) > 0 && r.paths[0] != StdinPath {
			base = r.paths[0]
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
			return "", selectError("%s is outside both the current directory and %s, so it has no subdirectory in the output; build it on its own, with its own -o DIR", u.Name(), base)
		}
		dir = rel
	}
	if dir == "." {
		return RootUnitDir, nil
	}
	return filepath.ToSlash(dir), nil
}

// UnitOf returns the selected unit whose subdirectory of the output holds
// file (slash-separated, relative to the output directory), the deepest
// one when units nest; nil when no unit's does.
func (r *Result) UnitOf(file string) *Unit {
	var best *Unit
	for _, u := range r.Units {
		if u.OutputDir == "" || strings.HasPrefix(file, u.OutputDir+"/") {
			if best == nil || len(u.OutputDir) > len(best.OutputDir) {
				best = u
			}
		}
	}
	return best
}
