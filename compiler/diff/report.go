package diff

import (
	"cmp"
	"slices"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// Side is a project at one revision: its checked set, its config and the
// routing table compiled from them.
type Side struct {
	Set    *model.Set
	Config *project.Config
	Table  *routing.Table
}

// Kinds of change.
const (
	Added   = "added"
	Removed = "removed"
	Changed = "changed"
	// Gained and Lost are said of routes.
	Gained = "gained"
	Lost   = "lost"
)

// Report is everything that differs between two revisions of a project.
type Report struct {
	// Base and Head name the two revisions, for headings.
	Base string `json:"base"`
	Head string `json:"head"`
	// Different is false when the two revisions compile to the same
	// project.
	Different bool    `json:"different"`
	Summary   Summary `json:"summary"`

	Objects    []ObjectChange   `json:"objects"`
	Routes     []RouteChange    `json:"routes"`
	Filters    []FilterChange   `json:"filters"`
	Deliveries []DeliveryChange `json:"deliveries"`
	Runtime    []RuntimeChange  `json:"runtime"`
	// Violations are changes to immutable fields: errors, which Knative
	// would reject.
	Violations diag.List `json:"violations"`
	// Tests are the route test cases whose outcome the change flips.
	Tests []TestFlip `json:"tests,omitempty"`
	// Units says, when the project has several deploy units, which of
	// them differ; the changes above each name their unit.
	Units []UnitReport `json:"units,omitempty"`

	// Graph is the topology of what changed, for drawing.
	Graph *topology.Graph `json:"-"`
}

// ObjectChange is an object added, removed or changed.
type ObjectChange struct {
	Change string `json:"change"`
	// Kind is the object's kind, with its API group unless that is
	// Knative's or the core group: Trigger, Service.serving.knative.dev.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	// Pos is where the object is defined: at head, or at the base for a
	// removed object.
	Pos diag.Pos `json:"pos"`
	// Fields are the changed fields of a changed object.
	Fields []FieldChange `json:"fields,omitempty"`
	// RenamedFrom names, for an added object, a removed object of the same
	// kind and namespace with the same content under another name.
	RenamedFrom string `json:"renamedFrom,omitempty"`
	// Unit names the deploy unit the change is in, when the project has
	// more than one.
	Unit string `json:"unit,omitempty"`
}

// Title names the object: "Trigger shop/orders".
func (c ObjectChange) Title() string {
	if c.Namespace == "" {
		return c.Kind + " " + c.Name
	}
	return c.Kind + " " + c.Namespace + "/" + c.Name
}

// FieldChange is one field of an object that differs. Old is missing for a
// field that was added, New for one that was removed.
type FieldChange struct {
	Path string   `json:"path"`
	Old  any      `json:"old,omitempty"`
	New  any      `json:"new,omitempty"`
	Pos  diag.Pos `json:"pos"`
}

// RouteChange is a route gained or lost: a path events take from a Broker
// through a Trigger, from a Channel through a Subscription, or from a
// Sequence or Parallel through a step or branch, to a subscriber (and a
// reply); or from an event source to its sink.
type RouteChange struct {
	Change string `json:"change"`
	// Source is "KIND NAMESPACE/NAME": a Broker, Channel, Sequence,
	// Parallel or event source.
	Source string `json:"source"`
	// Via is "Trigger NAME", "Subscription NAME", "Step N of M",
	// "Branch N of M", or "sink" for an event source.
	Via        string `json:"via"`
	Subscriber string `json:"subscriber,omitempty"`
	Reply      string `json:"reply,omitempty"`
	// Unit names the deploy unit the change is in, when the project has
	// more than one.
	Unit string `json:"unit,omitempty"`
}

// String writes the route as Source → Via → subscriber.
func (r RouteChange) String() string {
	s := r.Source + " → " + r.Via
	if r.Subscriber != "" {
		s += " → " + r.Subscriber
	}
	if r.Reply != "" {
		s += " (reply to " + r.Reply + ")"
	}
	return s
}

// Filter effects.
const (
	MatchesLess = "matches less"
	MatchesMore = "matches more"
	// Equivalent filters are written differently and pass the same events.
	Equivalent = "same events"
	// FilterChanged is a change whose effect cannot be decided simply.
	FilterChanged = "changed"
)

// FilterChange is a Trigger whose filter changed.
type FilterChange struct {
	Namespace string `json:"namespace"`
	Trigger   string `json:"trigger"`
	// Old and New are the filters as expressions; empty passes every event.
	Old string `json:"old"`
	New string `json:"new"`
	// Effect is MatchesLess, MatchesMore, Equivalent or FilterChanged.
	Effect string   `json:"effect"`
	Pos    diag.Pos `json:"pos"`
	// Unit names the deploy unit the change is in, when the project has
	// more than one.
	Unit string `json:"unit,omitempty"`
}

// DeliveryChange is a delivery option that changed.
type DeliveryChange struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Field is the option, such as retry or deadLetterSink.
	Field string `json:"field"`
	Old   string `json:"old,omitempty"`
	New   string `json:"new,omitempty"`
	// AppliesTo names, for a Broker or Channel, the Triggers or
	// Subscriptions that set no delivery of their own and so get the
	// change too.
	AppliesTo []string `json:"appliesTo,omitempty"`
	Pos       diag.Pos `json:"pos"`
	// Unit names the deploy unit the change is in, when the project has
	// more than one.
	Unit string `json:"unit,omitempty"`
}

// RuntimeChange is a change to what the runtime serves: an ingress point
// (a Broker or Channel knc runs) added, removed or moved, or a namespace
// that gains or loses its runtime.
type RuntimeChange struct {
	Change string `json:"change"`
	// Kind is Broker, Channel, or Runtime for a namespace's runtime.
	Kind      string `json:"kind"`
	Namespace string `json:"namespace"`
	Name      string `json:"name,omitempty"`
	// Path is the ingress path, /brokers/NAMESPACE/NAME.
	Path       string `json:"path,omitempty"`
	OldAddress string `json:"oldAddress,omitempty"`
	NewAddress string `json:"newAddress,omitempty"`
	// Unit names the deploy unit the change is in, when the project has
	// more than one.
	Unit string `json:"unit,omitempty"`
}

// Summary counts the changes, for the top of a report.
type Summary struct {
	Kinds        []KindCount `json:"kinds"`
	RoutesGained int         `json:"routesGained"`
	RoutesLost   int         `json:"routesLost"`
	Filters      int         `json:"filters"`
	Deliveries   int         `json:"deliveries"`
	Runtime      int         `json:"runtime"`
	Violations   int         `json:"violations"`
	TestsFlipped int         `json:"testsFlipped,omitempty"`
}

// KindCount counts the objects of one kind added, removed and changed.
type KindCount struct {
	Kind    string `json:"kind"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
	Changed int    `json:"changed"`
}

// Compare reports what differs between two revisions of a project.
func Compare(base, head Side) *Report {
	r := &Report{
		Objects:    compareObjects(base, head),
		Filters:    compareFilters(base.Set, head.Set),
		Deliveries: compareDeliveries(base.Set, head.Set),
		Runtime:    compareRuntime(base.Table, head.Table),
		Violations: Immutable(base.Set, head.Set),
	}
	baseGraph, headGraph := graph.Build(base.Set, base.Table), graph.Build(head.Set, head.Table)
	r.Routes = compareRoutes(baseGraph, headGraph)
	r.Graph = topology.Changes(baseGraph, headGraph)
	r.summarise()
	return r
}

// Relative rewrites the file names of every position relative to dir
// where that is shorter, as diagnostics are.
func (r *Report) Relative(dir string) {
	rel := func(p *diag.Pos) { p.File = diag.RelPath(dir, p.File) }
	for i := range r.Objects {
		rel(&r.Objects[i].Pos)
		for j := range r.Objects[i].Fields {
			rel(&r.Objects[i].Fields[j].Pos)
		}
	}
	for i := range r.Filters {
		rel(&r.Filters[i].Pos)
	}
	for i := range r.Deliveries {
		rel(&r.Deliveries[i].Pos)
	}
	for i := range r.Tests {
		rel(&r.Tests[i].Pos)
	}
	r.Violations = r.Violations.Relative(dir)
}

func (r *Report) summarise() {
	counts := map[string]*KindCount{}
	for _, o := range r.Objects {
		c, ok := counts[o.Kind]
		if !ok {
			c = &KindCount{Kind: o.Kind}
			counts[o.Kind] = c
		}
		switch o.Change {
		case Added:
			c.Added++
		case Removed:
			c.Removed++
		default:
			c.Changed++
		}
	}
	s := Summary{Filters: len(r.Filters), Deliveries: len(r.Deliveries), Runtime: len(r.Runtime), Violations: len(r.Violations), Kinds: []KindCount{}}
	for _, c := range counts {
		s.Kinds = append(s.Kinds, *c)
	}
	slices.SortFunc(s.Kinds, func(a, b KindCount) int {
		return cmp.Or(cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)), cmp.Compare(a.Kind, b.Kind))
	})
	for _, rc := range r.Routes {
		if rc.Change == Gained {
			s.RoutesGained++
		} else {
			s.RoutesLost++
		}
	}
	r.Summary = s
	r.Different = len(r.Objects)+len(r.Routes)+len(r.Filters)+len(r.Deliveries)+len(r.Runtime)+len(r.Violations) > 0
	// Empty lists encode as [], not null, for tools reading the JSON.
	if r.Objects == nil {
		r.Objects = []ObjectChange{}
	}
	if r.Routes == nil {
		r.Routes = []RouteChange{}
	}
	if r.Filters == nil {
		r.Filters = []FilterChange{}
	}
	if r.Deliveries == nil {
		r.Deliveries = []DeliveryChange{}
	}
	if r.Runtime == nil {
		r.Runtime = []RuntimeChange{}
	}
	if r.Violations == nil {
		r.Violations = diag.List{}
	}
}

// kindRank orders the Knative kinds first, in the order events flow.
func kindRank(kind string) int {
	switch kind {
	case "Config":
		return 0
	case "Broker":
		return 1
	case "Trigger":
		return 2
	case "Channel":
		return 3
	case "Subscription":
		return 4
	}
	return 5
}
