package router

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
)

// chooser supplies the choices that shape generated Triggers and events: a
// seeded random source for the differential test, the fuzzer's bytes for
// FuzzMatch.
type chooser interface {
	intn(n int) int
}

type randChooser struct{ r *rand.Rand }

func (c randChooser) intn(n int) int { return c.r.IntN(n) }

// byteChooser reads choices from data and returns 0 once it runs out, so
// every input, however short, describes a finite case.
type byteChooser struct{ data []byte }

func (c *byteChooser) intn(n int) int {
	if len(c.data) == 0 {
		return 0
	}
	b := c.data[0]
	c.data = c.data[1:]
	return int(b) % n
}

// The pools are small so that generated filters and events collide often:
// values are prefixes and suffixes of each other, and attributes are both
// context attributes and extensions, present and absent.
var (
	genAttributes = []string{"type", "source", "subject", "id", "time", "datacontenttype", "dataschema", "region", "tenant", "sequence", "missing"}
	genValues     = []string{"a", "ab", "abc", "b", "ba", "cab", "", "2024-05-01T12:30:00+02:00", "7", "true"}
	genExpr       = []string{
		"type = 'a'",
		"type LIKE 'a%' AND region = 'ab'",
		"EXISTS subject",
		"sequence > 5",
		"missing = 'a'", // evaluation error: no match
		"1 + 1",         // not a Boolean: no match
		"NOT (source IN ('a', 'b'))",
		"tenant = 'b' OR subject = 'ba'",
	}
	genTypes   = []string{"a", "ab", "abc", "b", "ba", "cab"}
	genSources = []string{"a", "ab", "b", "cab", "https://a.example/b"}
)

func genAttributeMap(c chooser) map[string]string {
	m := map[string]string{}
	for n := 1 + c.intn(2); n > 0; n-- {
		m[genAttributes[c.intn(len(genAttributes))]] = genValues[c.intn(len(genValues))]
	}
	return m
}

func genFilter(c chooser, depth int) routing.Filter {
	dialects := 7
	if depth >= 3 {
		dialects = 3 // only leaves
	}
	switch c.intn(dialects) {
	case 0:
		return routing.Filter{Exact: genAttributeMap(c)}
	case 1:
		return routing.Filter{Prefix: genAttributeMap(c)}
	case 2:
		return routing.Filter{Suffix: genAttributeMap(c)}
	case 3:
		return routing.Filter{All: genFilters(c, depth+1)}
	case 4:
		return routing.Filter{Any: genFilters(c, depth+1)}
	case 5:
		f := genFilter(c, depth+1)
		return routing.Filter{Not: &f}
	default:
		return routing.Filter{CESQL: genExpr[c.intn(len(genExpr))]}
	}
}

func genFilters(c chooser, depth int) []routing.Filter {
	filters := make([]routing.Filter, c.intn(3)+1)
	for i := range filters {
		filters[i] = genFilter(c, depth)
	}
	return filters
}

func genTrigger(c chooser, i int) routing.Trigger {
	t := routing.Trigger{Source: routing.Source{Namespace: "default", Name: fmt.Sprintf("t%d", i)}}
	switch c.intn(4) {
	case 0: // no filter
	case 1:
		t.Attributes = genAttributeMap(c)
	case 2:
		// Attributes are ignored when filters are set.
		t.Attributes = genAttributeMap(c)
		t.Filters = genFilters(c, 0)
	default:
		t.Filters = genFilters(c, 0)
	}
	return t
}

func genEvent(c chooser) *event.Event {
	version := event.CloudEventsVersionV1
	if c.intn(5) == 0 {
		version = event.CloudEventsVersionV03
	}
	e := event.New(version)
	e.SetID(genValues[c.intn(3)])
	e.SetType(genTypes[c.intn(len(genTypes))])
	e.SetSource(genSources[c.intn(len(genSources))])
	if c.intn(2) == 0 {
		e.SetSubject(genValues[c.intn(6)])
	}
	if c.intn(3) == 0 {
		e.SetTime(time.Date(2024, 5, 1, 12, 30, 0, 0, time.FixedZone("", 2*3600)))
	}
	if c.intn(3) == 0 {
		e.SetDataContentType(genValues[c.intn(3)])
	}
	if c.intn(4) == 0 {
		e.SetDataSchema("ab")
	}
	for _, ext := range []string{"region", "tenant"} {
		if c.intn(2) == 0 {
			e.SetExtension(ext, genValues[c.intn(6)])
		}
	}
	switch c.intn(3) {
	case 0:
		e.SetExtension("sequence", int32(7))
	case 1:
		e.SetExtension("sequence", "7")
	}
	return &e
}

// checkAgainstReference compares Match and Explain with the reference
// evaluator for one event.
func checkAgainstReference(t *testing.T, m *Matcher, triggers []routing.Trigger, e *event.Event) {
	t.Helper()
	want := referenceMatch(triggers, e)
	got := m.Match(e, nil)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("Match differs from the reference for event %v\ntriggers %+v\n(-want +got):\n%s", e, triggers, diff)
	}
	var explained []int
	for _, v := range m.Explain(e) {
		if v.Matched {
			explained = append(explained, v.Index)
		}
	}
	if diff := cmp.Diff(want, explained); diff != "" {
		t.Fatalf("Explain differs from the reference for event %v\n(-want +got):\n%s", e, diff)
	}
}

// TestMatchAgreesWithReference compares the indexed Matcher with the
// reference evaluator over random Triggers and events. The seeds are fixed,
// so a failure reproduces.
func TestMatchAgreesWithReference(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			c := randChooser{rand.New(rand.NewPCG(seed, 0x6b6e63))}
			triggers := make([]routing.Trigger, 1+c.intn(200))
			for i := range triggers {
				triggers[i] = genTrigger(c, i)
			}
			m, err := Compile(triggers)
			if err != nil {
				t.Fatal(err)
			}
			matchedSome := false
			for range 200 {
				e := genEvent(c)
				checkAgainstReference(t, m, triggers, e)
				matchedSome = matchedSome || len(m.Match(e, nil)) > 0
			}
			if !matchedSome {
				t.Errorf("no event matched any Trigger: the generator does not exercise matching")
			}
		})
	}
}

// TestIndexIsUsed makes sure the differential test exercises the index and
// not only the residual list.
func TestIndexIsUsed(t *testing.T) {
	c := randChooser{rand.New(rand.NewPCG(1, 0x6b6e63))}
	triggers := make([]routing.Trigger, 500)
	for i := range triggers {
		triggers[i] = genTrigger(c, i)
	}
	m, err := Compile(triggers)
	if err != nil {
		t.Fatal(err)
	}
	exact, prefix := 0, 0
	for _, x := range m.index.exact {
		exact += len(x.byValue.triggers)
	}
	for _, p := range m.index.prefix {
		prefix += p.root.count()
	}
	residual := len(m.index.residual)
	if exact == 0 || prefix == 0 || residual == 0 || exact+prefix+residual != len(triggers) {
		t.Errorf("exact %d + prefix %d + residual %d Triggers, want each > 0 and %d in all", exact, prefix, residual, len(triggers))
	}
}

func (n *radixNode) count() int {
	total := len(n.triggers)
	for _, c := range n.children {
		total += c.count()
	}
	return total
}

// FuzzMatch compares the Matcher with the reference evaluator on Triggers
// and an event built from the fuzzer's bytes.
func FuzzMatch(f *testing.F) {
	f.Fuzz(func(t *testing.T, data []byte) {
		c := &byteChooser{data: data}
		triggers := make([]routing.Trigger, 1+c.intn(16))
		for i := range triggers {
			triggers[i] = genTrigger(c, i)
		}
		m, err := Compile(triggers)
		if err != nil {
			t.Fatal(err)
		}
		for range 1 + c.intn(4) {
			checkAgainstReference(t, m, triggers, genEvent(c))
		}
	})
}

// TestHashedValueTable covers the hashed form of the exact index (more than
// smallTable values), including hash collisions, which it resolves by the
// full evaluation of every Trigger it returns.
func TestHashedValueTable(t *testing.T) {
	c := randChooser{rand.New(rand.NewPCG(3, 0x6b6e63))}
	var triggers []routing.Trigger
	for i := range 300 {
		// Distinct and repeated types, some with a second condition.
		f := routing.Filter{Exact: map[string]string{"type": fmt.Sprintf("type-%d", i%100)}}
		tr := trigger(fmt.Sprint("t", i), f)
		if i%3 == 0 {
			tr.Filters = append(tr.Filters, genFilter(c, 1))
		}
		triggers = append(triggers, tr)
	}
	events := make([]*event.Event, 0, 300)
	for range 300 {
		e := genEvent(c)
		e.SetType(fmt.Sprintf("type-%d", c.intn(120)))
		events = append(events, e)
	}

	m, err := Compile(triggers)
	if err != nil {
		t.Fatal(err)
	}
	typeIndex := slices.IndexFunc(m.index.exact, func(x exactIndex) bool { return x.attr.name == "type" })
	if typeIndex < 0 || m.index.exact[typeIndex].byValue.slots == nil {
		t.Fatal("the index of type is missing or not hashed")
	}
	for _, e := range events {
		checkAgainstReference(t, m, triggers, e)
	}

	// Make every filled slot return every Trigger of the table, as if all
	// values collided.
	vt := &m.index.exact[typeIndex].byValue
	for i := range vt.slots {
		if vt.slots[i].hash != 0 {
			vt.slots[i].span = span{0, int32(len(vt.triggers))}
		}
	}
	for _, e := range events {
		checkAgainstReference(t, m, triggers, e)
	}
}
