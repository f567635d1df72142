package diff

import (
	"cmp"
	"slices"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/topology"
)

// Sides is a project at one revision, deploy unit by deploy unit: each
// kustomization no other one includes is deployed on its own, and so is
// the set of plain files, so each is compared on its own.
type Sides struct {
	Config *project.Config
	Units  []UnitSide
}

// UnitSide is one deploy unit at one revision.
type UnitSide struct {
	// Name is how messages name the unit, as compiler.Unit.Name does; it
	// pairs the unit with the same unit at the other revision.
	Name string
	Side
}

// UnitReport says whether one deploy unit differs, and how much.
type UnitReport struct {
	Unit      string  `json:"unit"`
	Different bool    `json:"different"`
	Summary   Summary `json:"summary"`

	graph *topology.Graph
}

// PrepareUnits pairs each deploy unit of a valid project with the routing
// table the pipeline's routes stage compiled for it (compiler.Options'
// Routes). Diagnostics report what the routes stage could not compile.
func PrepareUnits(res *compiler.Result) (Sides, diag.List) {
	if len(res.Later) > 0 {
		return Sides{}, res.Later
	}
	out := Sides{Config: res.Config}
	for _, u := range res.Units {
		out.Units = append(out.Units, UnitSide{Name: u.Name(), Side: Side{Set: u.Set, Config: res.Config, Table: u.Table}})
	}
	return out, nil
}

// CompareUnits reports what differs between two revisions of a project,
// pairing their deploy units by name. With one unit on both sides the
// report is the one Compare gives; with more, every change names its unit
// and Units lists each unit's summary. A unit only one side has is
// compared with an empty one: all of it added, or all of it removed.
func CompareUnits(base, head Sides) *Report {
	names := unitNames(base.Units, head.Units)
	if len(names) <= 1 {
		name := ""
		if len(names) == 1 {
			name = names[0]
		}
		return Compare(base.unit(name), head.unit(name))
	}
	r := &Report{}
	for _, name := range names {
		u := Compare(base.unit(name), head.unit(name))
		r.Units = append(r.Units, UnitReport{Unit: name, Different: u.Different, Summary: u.Summary, graph: u.Graph})
		r.Objects = append(r.Objects, tagged(u.Objects, name, func(c *ObjectChange) *string { return &c.Unit })...)
		r.Routes = append(r.Routes, tagged(u.Routes, name, func(c *RouteChange) *string { return &c.Unit })...)
		r.Filters = append(r.Filters, tagged(u.Filters, name, func(c *FilterChange) *string { return &c.Unit })...)
		r.Deliveries = append(r.Deliveries, tagged(u.Deliveries, name, func(c *DeliveryChange) *string { return &c.Unit })...)
		r.Runtime = append(r.Runtime, tagged(u.Runtime, name, func(c *RuntimeChange) *string { return &c.Unit })...)
		r.Violations = append(r.Violations, u.Violations...)
	}
	// A base file two overlays include reports its immutable field once.
	r.Violations = r.Violations.Sorted()
	r.summarise()
	return r
}

// unit is the side of the named unit, or an empty one when the revision
// has no such unit.
func (s Sides) unit(name string) Side {
	for _, u := range s.Units {
		if u.Name == name {
			return u.Side
		}
	}
	empty := &model.Set{Index: map[model.Key]*model.Entry{}}
	table, _ := routes.Compile(empty, s.Config)
	return Side{Set: empty, Config: s.Config, Table: table}
}

// unitNames lists the units of both revisions, the plain files first and
// kustomizations by name, as the loader orders them.
func unitNames(base, head []UnitSide) []string {
	seen := map[string]bool{}
	var names []string
	for _, u := range slices.Concat(base, head) {
		if !seen[u.Name] {
			seen[u.Name] = true
			names = append(names, u.Name)
		}
	}
	plain := (&compiler.Unit{}).Name()
	slices.SortStableFunc(names, func(a, b string) int {
		return cmp.Or(-cmp.Compare(boolRank(a == plain), boolRank(b == plain)), cmp.Compare(a, b))
	})
	return names
}

func boolRank(b bool) int {
	if b {
		return 1
	}
	return 0
}

// tagged copies changes with their unit set.
func tagged[T any](changes []T, unit string, field func(*T) *string) []T {
	out := slices.Clone(changes)
	for i := range out {
		*field(&out[i]) = unit
	}
	return out
}

// unitReport is the part of r one unit accounts for, for writing it
// under its own heading.
func (r *Report) unitReport(u UnitReport) *Report {
	in := func(unit string) bool { return unit == u.Unit }
	return &Report{
		Different:  u.Different,
		Summary:    u.Summary,
		Objects:    slices.DeleteFunc(slices.Clone(r.Objects), func(c ObjectChange) bool { return !in(c.Unit) }),
		Routes:     slices.DeleteFunc(slices.Clone(r.Routes), func(c RouteChange) bool { return !in(c.Unit) }),
		Filters:    slices.DeleteFunc(slices.Clone(r.Filters), func(c FilterChange) bool { return !in(c.Unit) }),
		Deliveries: slices.DeleteFunc(slices.Clone(r.Deliveries), func(c DeliveryChange) bool { return !in(c.Unit) }),
		Runtime:    slices.DeleteFunc(slices.Clone(r.Runtime), func(c RuntimeChange) bool { return !in(c.Unit) }),
		Graph:      u.graph,
	}
}
