package router

import (
	"errors"
	"fmt"
	"slices"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/internal/routing"
)

// Matcher holds the compiled filters of one Broker's Triggers. It is
// immutable once built and safe for concurrent use.
type Matcher struct {
	conditions []condition // one per Trigger, in the order given to Compile
	index      index
}

// Compile compiles the filters of triggers, which are the Triggers of one
// Broker. Each error names the Trigger and the filter's path in it, such as
// "default/t1: filters[1].not.cesql: ...".
func Compile(triggers []routing.Trigger) (*Matcher, error) {
	m := &Matcher{conditions: make([]condition, len(triggers))}
	var errs []error
	for i := range triggers {
		c, err := compileTrigger(&triggers[i])
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", triggers[i].Key(), err))
			continue
		}
		m.conditions[i] = c
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	m.index = buildIndex(m.conditions)
	return m, nil
}

// Match appends to dst the indices (into the slice given to Compile) of every
// Trigger e passes, in ascending order and each once, and returns the
// extended slice. It does not allocate when dst has room for the result,
// unless a filter needs the string form of source, time or dataschema (built
// once per call) or evaluates CESQL.
func (m *Matcher) Match(e *event.Event, dst []int) []int {
	v := newEventView(e)
	start := len(dst)
	dst = m.index.match(m.conditions, &v, dst)
	if len(dst)-start > 1 {
		slices.Sort(dst[start:])
	}
	return dst
}

// Explain evaluates every Trigger against e and says why it matched or not,
// one Verdict per Trigger in Compile's order.
func (m *Matcher) Explain(e *event.Event) []Verdict {
	v := newEventView(e)
	verdicts := make([]Verdict, len(m.conditions))
	for i := range m.conditions {
		c := &m.conditions[i]
		r, reason := c.explain(&v)
		if len(c.children) == 0 && c.kind == condAll {
			reason = "no filter: every event matches"
			if c.label == "filters" {
				reason = "filters: every filter has an empty attribute name or value, which Knative leaves out: every event matches"
			}
		}
		verdicts[i] = Verdict{Index: i, Matched: r.delivers(), Reason: reason}
	}
	return verdicts
}
