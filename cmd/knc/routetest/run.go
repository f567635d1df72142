package routetest

import (
	"fmt"
	"slices"
	"strings"

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
				out = append(out, Result{File: f, Case: c, Failures: []string{missing(c.Target, evs)}})
			}
		}
	}
	return out
}

func missing(t Target, evs []*Evaluator) string {
	var known []string
	for _, ev := range evs {
		known = append(known, ev.Targets(t.Kind)...)
	}
	slices.Sort(known)
	known = slices.Compact(known)
	kinds := strings.ToLower(t.Kind) + "s"
	if len(known) == 0 {
		return fmt.Sprintf("%s is not in the manifests, which have no %s that knc runs", t, kinds)
	}
	return fmt.Sprintf("%s is not in the manifests; the %s knc runs are %s", t, kinds, strings.Join(known, ", "))
}
