package diff

import (
	"fmt"

	"github.com/knc-dev/knc/compiler/diag"
)

// TestFlip is a route test case (knc test) whose outcome differs between
// the two revisions: the cases of the working tree, run against both.
type TestFlip struct {
	Pos  diag.Pos `json:"pos"`
	Case string   `json:"case"`
	// Unit names the deploy unit, when there are several.
	Unit string `json:"unit,omitempty"`
	// Base and Head are what the case's event reaches at each revision,
	// such as "[audit, billing]" or "none".
	Base       string `json:"base"`
	Head       string `json:"head"`
	PassedBase bool   `json:"passedBase"`
	PassedHead bool   `json:"passedHead"`
}

// AddTestFlips records the test cases the change flips. A flipped case
// makes the revisions different even when nothing else is reported.
func (r *Report) AddTestFlips(flips []TestFlip) {
	r.Tests = flips
	r.Summary.TestsFlipped = len(flips)
	if len(flips) > 0 {
		r.Different = true
	}
}

func (f TestFlip) verdict() string {
	switch {
	case f.PassedBase && !f.PassedHead:
		return "passes → fails"
	case !f.PassedBase && f.PassedHead:
		return "fails → passes"
	case f.PassedHead:
		return "passes"
	}
	return "still fails"
}

func (r *Report) testsSection(p painter) []section {
	if len(r.Tests) == 0 {
		return nil
	}
	s := section{title: "Test cases", count: len(r.Tests)}
	for _, f := range r.Tests {
		change := Changed
		if f.PassedBase && !f.PassedHead {
			change = Lost
		} else if !f.PassedBase && f.PassedHead {
			change = Gained
		}
		name := "case " + f.Case
		if f.Unit != "" {
			name += " in " + f.Unit
		}
		text := fmt.Sprintf("%s: %s: reaches %s → %s", name, f.verdict(), f.Base, f.Head)
		s.lines = append(s.lines, p.line(change, text)+"  "+p.paint(styleDim, posString(f.Pos)))
	}
	return []section{s}
}
