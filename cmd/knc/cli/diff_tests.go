package cli

import (
	"cmp"
	"fmt"
	"io"
	"slices"

	"github.com/knc-dev/knc/cmd/knc/routetest"
	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diff"
)

// testFlips runs the route test cases of the working tree against both
// revisions and returns those whose outcome differs. Test files with
// mistakes are reported on stderr and left out: knc test reports them.
func testFlips(stderr io.Writer, args []string, base, head diff.Sides) ([]diff.TestFlip, error) {
	manifests, explicit := testArgs(args)
	names := explicit
	if len(names) == 0 {
		var err error
		if names, err = findTestFiles(&compiler.Result{Config: head.Config}, manifests); err != nil {
			return nil, &exitError{code: exitTrouble, err: err}
		}
	}
	if len(names) == 0 {
		return nil, nil
	}
	files, diags, err := readTestFiles(names, false)
	if err != nil {
		return nil, err
	}
	if len(diags) > 0 {
		fmt.Fprintln(stderr, "knc: test files with mistakes are left out of the comparison:")
		printDiagnostics(stderr, diags)
	}
	before := routetest.Run(files, routeUnits(base))
	after := routetest.Run(files, routeUnits(head))
	type key struct {
		c    *routetest.Case
		unit string
	}
	was := map[key]*routetest.Result{}
	for i := range before {
		was[key{before[i].Case, before[i].Unit}] = &before[i]
	}
	var flips []diff.TestFlip
	for i := range after {
		now := &after[i]
		old := was[key{now.Case, now.Unit}]
		if old != nil && old.Passed() == now.Passed() && reached(old) == reached(now) && destinations(old) == destinations(now) {
			continue
		}
		f := diff.TestFlip{Pos: now.Case.Pos, Case: now.Case.Name, Unit: now.Unit, Head: reached(now), PassedHead: now.Passed(), Base: "(not evaluated)"}
		if old != nil {
			f.Base, f.PassedBase = reached(old), old.Passed()
		}
		flips = append(flips, f)
	}
	slices.SortStableFunc(flips, func(a, b diff.TestFlip) int {
		return cmp.Or(cmp.Compare(a.Pos.File, b.Pos.File), cmp.Compare(a.Pos.Line, b.Pos.Line))
	})
	return flips, nil
}

func reached(r *routetest.Result) string {
	if r.Outcome == nil {
		return "(not evaluated: " + r.Failures[0] + ")"
	}
	return routetest.List(r.Outcome.Reached)
}

func destinations(r *routetest.Result) string {
	if r.Outcome == nil {
		return ""
	}
	return routetest.List(r.Outcome.Destinations)
}

// routeUnits are the units of one revision that have a routing table.
func routeUnits(s diff.Sides) []routetest.Unit {
	var units []routetest.Unit
	for _, u := range s.Units {
		if u.Table == nil {
			continue
		}
		units = append(units, routetest.Unit{Name: u.Name, Table: u.Table})
	}
	if len(units) == 1 {
		units[0].Name = ""
	}
	return units
}
