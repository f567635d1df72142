package diff

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
)

// ANSI styles for a terminal.
const (
	styleReset  = "\x1b[0m"
	styleBold   = "\x1b[1m"
	styleDim    = "\x1b[2m"
	styleRed    = "\x1b[31m"
	styleGreen  = "\x1b[32m"
	styleYellow = "\x1b[33m"
	styleCyan   = "\x1b[36m"
)

// painter applies styles when colour is on.
type painter bool

func (p painter) paint(style, s string) string {
	if !p || s == "" {
		return s
	}
	return style + s + styleReset
}

// line writes one line of a change list, marked +, - or ~ as in a diff.
func (p painter) line(change, text string) string {
	switch change {
	case Added, Gained:
		return p.paint(styleGreen, "+ "+text)
	case Removed, Lost:
		return p.paint(styleRed, "- "+text)
	}
	return p.paint(styleYellow, "~ "+text)
}

// WriteText writes the report as text: a heading, a summary, then the
// details by section. With colour, it uses ANSI colours for a terminal.
func (r *Report) WriteText(w io.Writer, colour bool) error {
	p := painter(colour)
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "%s\n", p.paint(styleBold, "knc diff "+r.Base+" → "+r.Head))
	if !r.Different {
		bw.WriteString("\nNo differences.\n")
		return bw.Flush()
	}
	bw.WriteString("\n" + p.paint(styleBold, "Summary") + "\n")
	for _, l := range r.summaryLines() {
		bw.WriteString("  " + l + "\n")
	}
	r.writeSections(bw, p)
	return bw.Flush()
}

// summaryLines is the summary as a small table of kinds, then one line
// per other section that has changes.
func (r *Report) summaryLines() []string {
	var lines []string
	s := r.Summary
	if len(s.Kinds) > 0 {
		width := len("kind")
		for _, k := range s.Kinds {
			width = max(width, len(k.Kind))
		}
		lines = append(lines, fmt.Sprintf("%-*s  %5s  %7s  %7s", width, "kind", "added", "removed", "changed"))
		for _, k := range s.Kinds {
			lines = append(lines, fmt.Sprintf("%-*s  %5d  %7d  %7d", width, k.Kind, k.Added, k.Removed, k.Changed))
		}
	}
	var facts []string
	if s.RoutesGained+s.RoutesLost > 0 {
		facts = append(facts, fmt.Sprintf("routes: %d gained, %d lost", s.RoutesGained, s.RoutesLost))
	}
	if s.Filters > 0 {
		facts = append(facts, "filters: "+plural(s.Filters, "change"))
	}
	if s.Deliveries > 0 {
		facts = append(facts, "delivery: "+plural(s.Deliveries, "change"))
	}
	if s.Runtime > 0 {
		facts = append(facts, "runtime: "+plural(s.Runtime, "change"))
	}
	if len(facts) > 0 {
		lines = append(lines, strings.Join(facts, "; "))
	}
	if s.TestsFlipped > 0 {
		lines = append(lines, "test cases flipped: "+strconv.Itoa(s.TestsFlipped))
	}
	if s.Violations > 0 {
		lines = append(lines, "immutable-field changes: "+strconv.Itoa(s.Violations)+" (errors, reported on their own)")
	}
	if differ := r.differingUnits(); len(differ) > 0 {
		lines = append(lines, fmt.Sprintf("deploy units that differ: %d of %d: %s", len(differ), len(r.Units), strings.Join(differ, ", ")))
	}
	return lines
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// section is one part of the details, as lines already marked.
type section struct {
	title string
	lines []string
	// count is the number of changes, which a change's detail lines do
	// not add to.
	count int
}

// sections lists the details. Immutable-field changes are not among them:
// they are errors, which the caller reports as diagnostics.
func (r *Report) sections(p painter) []section {
	var out []section
	if len(r.Objects) > 0 {
		s := section{title: "Objects", count: len(r.Objects)}
		for _, o := range r.Objects {
			text := o.Title()
			if o.RenamedFrom != "" {
				text += " (renamed from " + o.RenamedFrom + ": a new object to Kubernetes)"
			}
			s.lines = append(s.lines, p.line(o.Change, text)+"  "+p.paint(styleDim, posString(o.Pos)))
			for _, f := range o.Fields {
				s.lines = append(s.lines, "    "+f.Path+": "+showValue(f.Old)+" → "+showValue(f.New)+"  "+p.paint(styleDim, posString(f.Pos)))
			}
		}
		out = append(out, s)
	}
	if len(r.Routes) > 0 {
		s := section{title: "Routes", count: len(r.Routes)}
		for _, rc := range r.Routes {
			s.lines = append(s.lines, p.line(rc.Change, rc.String()))
		}
		out = append(out, s)
	}
	if len(r.Filters) > 0 {
		s := section{title: "Filters", count: len(r.Filters)}
		for _, f := range r.Filters {
			s.lines = append(s.lines, p.line(Changed, "Trigger "+f.Namespace+"/"+f.Trigger+": "+p.paint(styleBold, filterEffectText(f)))+"  "+p.paint(styleDim, posString(f.Pos)))
			s.lines = append(s.lines, "    was: "+filterText(f.Old), "    now: "+filterText(f.New))
		}
		out = append(out, s)
	}
	if len(r.Deliveries) > 0 {
		s := section{title: "Delivery", count: len(r.Deliveries)}
		for _, d := range r.Deliveries {
			text := d.Kind + " " + d.Namespace + "/" + d.Name + ": delivery." + d.Field + ": " + orNone(d.Old) + " → " + orNone(d.New)
			if len(d.AppliesTo) > 0 {
				text += " (also for " + strings.Join(d.AppliesTo, ", ") + ")"
			}
			s.lines = append(s.lines, p.line(Changed, text)+"  "+p.paint(styleDim, posString(d.Pos)))
		}
		out = append(out, s)
	}
	if len(r.Runtime) > 0 {
		s := section{title: "Runtime", count: len(r.Runtime)}
		for _, rc := range r.Runtime {
			s.lines = append(s.lines, p.line(rc.Change, runtimeText(rc)))
		}
		out = append(out, s)
	}
	return out
}

// unitSections are the sections of each unit that differs, titled with
// the unit's name; with one unit, they are the sections.
func (r *Report) unitSections(p painter) []section {
	if len(r.Units) == 0 {
		return append(r.sections(p), r.testsSection(p)...)
	}
	var out []section
	for _, u := range r.Units {
		for _, s := range r.unitReport(u).sections(p) {
			s.title += " in " + u.Unit
			out = append(out, s)
		}
	}
	return append(out, r.testsSection(p)...)
}

func (r *Report) writeSections(w *bufio.Writer, p painter) {
	for _, s := range r.unitSections(p) {
		w.WriteString("\n" + p.paint(styleBold, s.title) + "\n")
		for _, l := range s.lines {
			w.WriteString(l + "\n")
		}
	}
}

func filterEffectText(f FilterChange) string {
	switch {
	case f.Old == "":
		return f.Effect + " (a filter was added; before, every event passed)"
	case f.New == "":
		return f.Effect + " (the filter was removed: every event passes)"
	}
	return f.Effect
}

func filterText(expr string) string {
	if expr == "" {
		return "(every event)"
	}
	return expr
}

func runtimeText(rc RuntimeChange) string {
	switch {
	case rc.Kind == "Runtime" && rc.Change == Added:
		return "namespace " + rc.Namespace + ": gets a knc runtime (its first Broker or Channel that knc serves)"
	case rc.Kind == "Runtime":
		return "namespace " + rc.Namespace + ": loses its knc runtime (no Broker or Channel that knc serves is left)"
	case rc.Change == Added:
		return "ingress " + rc.Path + " for " + rc.Kind + " " + rc.Namespace + "/" + rc.Name + " at " + rc.NewAddress
	case rc.Change == Removed:
		return "ingress " + rc.Path + " for " + rc.Kind + " " + rc.Namespace + "/" + rc.Name + " (was " + rc.OldAddress + ")"
	}
	return "ingress " + rc.Path + ": address " + rc.OldAddress + " → " + rc.NewAddress
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func posString(p diag.Pos) string {
	if p.File == "" {
		return ""
	}
	return p.String()
}

// showValue writes a field's value as compact JSON; a missing one as
// (none).
func showValue(v any) string {
	if v == nil {
		return "(none)"
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	s := string(b)
	if len(s) > 200 {
		s = s[:199] + "…"
	}
	return s
}

// ColorUnified colours the lines of a unified diff for a terminal.
func ColorUnified(diff string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(diff, "\n") {
		if line == "" {
			continue
		}
		text := strings.TrimSuffix(line, "\n")
		style := ""
		switch {
		case strings.HasPrefix(text, "+++"), strings.HasPrefix(text, "---"):
			style = styleBold
		case strings.HasPrefix(text, "@@"):
			style = styleCyan
		case strings.HasPrefix(text, "+"):
			style = styleGreen
		case strings.HasPrefix(text, "-"):
			style = styleRed
		}
		b.WriteString(painter(true).paint(style, text))
		if strings.HasSuffix(line, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

// differingUnits names the deploy units that differ.
func (r *Report) differingUnits() []string {
	var names []string
	for _, u := range r.Units {
		if u.Different {
			names = append(names, u.Unit)
		}
	}
	return names
}
