package router

import (
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/binding/spec"
	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

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

func referencePasses(t *routing.Trigger, e *event.Event) bool {
	if len(t.Filters) > 0 {
		for i := range t.Filters {
			if !referenceFilter(&t.Filters[i], e) {
				return false
			}
		}
		return true
	}
	for name, want := range t.Attributes {
		got, ok := referenceAttribute(e, name)
		if !ok || (want != "" && got != want) {
			return false
		}
	}
	return true
}

func referenceFilter(f *routing.Filter, e *event.Event) bool {
	switch {
	case f.Exact != nil:
		return referenceEach(f.Exact, e, func(got, want string) bool { return got == want })
	case f.Prefix != nil:
		return referenceEach(f.Prefix, e, strings.HasPrefix)
	case f.Suffix != nil:
		return referenceEach(f.Suffix, e, strings.HasSuffix)
	case f.All != nil:
		for i := range f.All {
			if !referenceFilter(&f.All[i], e) {
				return false
			}
		}
		return true
	case f.Any != nil:
		for i := range f.Any {
			if referenceFilter(&f.Any[i], e) {
				return true
			}
		}
		return false
	case f.Not != nil:
		return !referenceFilter(f.Not, e)
	case f.CESQL != "":
		x, err := cesql.Parse(f.CESQL)
		if err != nil {
			panic(err)
		}
		ok, err := x.Evaluate(e)
		return ok && err == nil
	}
	panic("filter with no dialect")
}

func referenceEach(m map[string]string, e *event.Event, test func(got, want string) bool) bool {
	for name, want := range m {
		got, ok := referenceAttribute(e, name)
		if !ok || !test(got, want) {
			return false
		}
	}
	return true
}

func referenceAttribute(e *event.Event, name string) (string, bool) {
	var v any
	if a := spec.V1.Attribute(name); a != nil {
		v = a.Get(e.Context)
	} else {
		v = e.Extensions()[name]
	}
	if v == nil {
		return "", false
	}
	// time keeps the offset it was sent with; types.Format would convert it
	// to UTC.
	if t, ok := v.(time.Time); ok && name == "time" {
		return t.Format(time.RFC3339Nano), true
	}
	s, err := types.Format(v)
	if err != nil {
		return "", false
	}
	return s, true
}
