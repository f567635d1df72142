package routetest

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/routing"
)

// Unit is the routing table of one deploy unit.
type Unit struct {
	// Name is how messages name the unit; empty when there is one.
	Name  string
	Table *routing.Table
}

// Result is one case evaluated in one unit, or in none when no unit holds
// its target.
type Result struct {
	File    *File
	Case    *Case
	Unit    string
	Outcome *Outcome
	// Failures say what differs, as "expected [a, b], got [a]", or what
	// kept the case from being evaluated.
	Failures []string
	// Explanations give the filter that decided each difference.
	Explanations []string
	// Missing is set when no unit holds the case's target: Failures say
	// so, at the target's position.
	Missing bool
}

// Pos is where the result is reported: the case, or the name of a target
// no unit holds.
func (r *Result) Pos() diag.Pos {
	if r.Missing && r.Case.Target.Pos.Line > 0 {
		return r.Case.Target.Pos
	}
	return r.Case.Pos
}

// Passed reports whether the case holds.
func (r *Result) Passed() bool { return len(r.Failures) == 0 }

// Run evaluates every case of files in every unit whose table holds its
// target: a Broker defined in two overlays is checked in both.
func Run(files []*File, units []Unit) []Result {
	evs := make([]*Evaluator, len(units))
	for i, u := range units {
		evs[i] = NewEvaluator(u.Table)
	}
	var out []Result
	for _, f := range files {
		for _, c := range f.Cases {
			found := false
			for i, ev := range evs {
				if !ev.Has(c.Target) {
					continue
				}
				found = true
				r := Result{File: f, Case: c, Unit: units[i].Name}
				o, err := ev.Evaluate(c)
				if err != nil {
					r.Failures = []string{err.Error()}
				} else {
					r.Outcome = o
					if r.Failures = Differences(c, o); len(r.Failures) > 0 {
						r.Explanations = Explanations(c, o)
					}
				}
				out = append(out, r)
			}
			if !found {
				out = append(out, Result{File: f, Case: c, Failures: []string{missing(c.Target, evs)}, Missing: true})
			}
		}
	}
	return out
}

func missing(t Target, evs []*Evaluator) string {
	kind := t.Kind
	if t.IsSource() && kind != KindPingSource {
		kind = "" // every source, named with its kind
	}
	var known []string
	for _, ev := range evs {
		known = append(known, ev.Targets(kind)...)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	kinds, name := strings.ToLower(t.Kind)+"s", t.key()
	if kind == "" {
		kinds, name = "sources", t.sourceKey()
	}
	if len(known) == 0 {
		return fmt.Sprintf("%s is not in the manifests, which have no %s that knc runs", t, kinds)
	}
	list := kinds + " knc runs are "
	if kind == "" {
		list = "sources are "
	}
	near := nearest(name, known)
	if kind == "" {
		// A source of another kind with the same name is the likelier
		// slip than a name a few letters off.
		for _, k := range known {
			if strings.HasSuffix(k, "/"+t.key()) && strings.Count(k, "/") == 2 {
				near = k
				break
			}
		}
	}
	if near != "" {
		return fmt.Sprintf("%s is not in the manifests; did you mean %s? The %s%s", t, near, list, strings.Join(known, ", "))
	}
	return fmt.Sprintf("%s is not in the manifests; the %s%s", t, list, strings.Join(known, ", "))
}

// nearest is the candidate closest to name by edit distance, when it is
// close enough to be a slip of the keyboard; empty otherwise.
func nearest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(c))
		if bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(name)/4) {
		return ""
	}
	return best
}
