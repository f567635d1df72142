package router

import (
	"errors"
	"fmt"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/internal/cesql"
	"github.com/knc-dev/knc/internal/routing"
)

// This file holds the reference evaluator the Matcher is checked against: a
// direct reading of the filter semantics over routing.Trigger, with no
// compilation and no index, evaluating every Trigger for every event. It
// reads attributes through the SDK's generic accessors rather than the
// Matcher's struct fields, so the two lookups check each other too.

func referenceMatch(triggers []routing.Trigger, e *event.Event) []int {
	var matched []int
	for i := range triggers {
		if referencePasses(&triggers[i], e) {
			matched = append(matched, i)
		}
	}
	return matched
}

// The reference's results, as Knative's dispatcher has them.
const (
	refFail = iota
	refPass
	refNoFilter
	refAbort
)

func referencePasses(t *routing.Trigger, e *event.Event) bool {
	// The dispatcher deletes the Broker's TTL before filtering.
	if _, ok := e.Extensions()["knativebrokerttl"]; ok {
		c := e.Clone()
		_ = c.Context.SetExtension("knativebrokerttl", nil)
		e = &c
	}
	if len(t.Filters) > 0 {
		r := referenceList(t.Filters, e, true)
		return r == refPass || r == refNoFilter
	}
	for name, want := range t.Attributes {
		got, ok := referenceLookup(e, name)
		if !ok || (want == "" && got == "") || (want != "" && got != any(want)) {
			return false
		}
	}
	return true
}

// referenceList evaluates an all (all true) or an any (all false) of
// filters, leaving out those the dispatcher cannot build.
func referenceList(filters []routing.Filter, e *event.Event, all bool) int {
	r := refNoFilter
	for i := range filters {
		f, built := referenceFilter(&filters[i], e)
		if !built {
			continue
		}
		r = f
		if r == refAbort || (all && r == refFail) || (!all && r == refPass) {
			return r
		}
	}
	return r
}

// referenceFilter evaluates f, and says whether the dispatcher can build it
// at all.
func referenceFilter(f *routing.Filter, e *event.Event) (int, bool) {
	switch {
	case f.Exact != nil:
		return referenceEach(f.Exact, e, func(got, want string) bool { return got == want })
	case f.Prefix != nil:
		return referenceEach(f.Prefix, e, strings.HasPrefix)
	case f.Suffix != nil:
		return referenceEach(f.Suffix, e, strings.HasSuffix)
	case f.All != nil:
		return referenceList(f.All, e, true), true
	case f.Any != nil:
		return referenceList(f.Any, e, false), true
	case f.Not != nil:
		switch r, built := referenceFilter(f.Not, e); {
		case !built:
			return refNoFilter, true
		case r == refPass:
			return refFail, true
		case r == refFail:
			return refPass, true
		default:
			return r, true
		}
	case f.CESQL != "":
		x, err := cesql.Parse(f.CESQL)
		if err != nil {
			panic(err)
		}
		ok, err := x.Evaluate(e)
		switch {
		case errors.Is(err, cesql.ErrNotBoolean):
			return refAbort, true
		case err != nil || !ok:
			return refFail, true
		}
		return refPass, true
	}
	panic("filter with no dialect")
}

func referenceEach(m map[string]string, e *event.Event, test func(got, want string) bool) (int, bool) {
	for name, want := range m {
		if name == "" || want == "" {
			return refFail, false
		}
	}
	for name, want := range m {
		got, ok := referenceLookup(e, name)
		if !ok {
			return refFail, true
		}
		s, isString := got.(string)
		if !isString {
			s = fmt.Sprint(got)
		}
		if !test(s, want) {
			return refFail, true
		}
	}
	return refPass, true
}

// referenceLookup reads an attribute through the SDK's event accessors.
func referenceLookup(e *event.Event, name string) (any, bool) {
	switch name {
	case "specversion":
		return e.SpecVersion(), true
	case "type":
		return e.Type(), true
	case "source":
		return e.Source(), true
	case "subject":
		return e.Subject(), true
	case "id":
		return e.ID(), true
	case "time":
		b, err := e.Time().MarshalText()
		if err != nil {
			return nil, false
		}
		return string(b), true
	case "dataschema", "schemaurl":
		return e.DataSchema(), true
	case "datacontenttype":
		return e.DataContentType(), true
	case "datamediatype":
		return e.DataMediaType(), true
	case "datacontentencoding":
		return e.DeprecatedDataContentEncoding(), true
	}
	v, ok := e.Extensions()[name]
	return v, ok
}
