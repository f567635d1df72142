package router

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/knc-dev/knc/internal/cesql"
	"github.com/knc-dev/knc/internal/routing"
)

type condKind uint8

const (
	condExact   condKind = iota // attribute present and equal to value
	condPrefix                  // attribute present and starting with value
	condSuffix                  // attribute present and ending with value
	condPresent                 // attribute present, any value
	condAll                     // every child passes (none: passes)
	condAny                     // some child passes (none: fails)
	condNot                     // the only child fails
	condCESQL                   // the expression yields true without error
)

// condition is one compiled node of a Trigger's filter.
type condition struct {
	kind     condKind
	attr     attribute
	value    string
	children []condition
	expr     cesql.Expression
	// label is where the node came from, as Explain reports it:
	// "filters[1].not", "filters[0].any[2]", "attributes".
	label string
}

// compileTrigger builds the condition a Trigger's events must meet. A Trigger
// with neither filters nor attributes gets an empty condAll, which every event
// passes.
func compileTrigger(t *routing.Trigger) (condition, error) {
	if len(t.Filters) > 0 {
		root := condition{kind: condAll, label: "filters"}
		var errs []error
		for i := range t.Filters {
			c, err := compileFilter(&t.Filters[i], fmt.Sprintf("filters[%d]", i))
			errs = append(errs, err)
			root.children = append(root.children, c)
		}
		return collapse(root), errors.Join(errs...)
	}
	root := condition{kind: condAll, label: "attributes"}
	for _, name := range sortedKeys(t.Attributes) {
		c := condition{kind: condExact, attr: newAttribute(name), value: t.Attributes[name], label: "attributes"}
		if c.value == "" {
			c.kind = condPresent
		}
		root.children = append(root.children, c)
	}
	return collapse(root), nil
}

// collapse replaces an "all" of one condition with that condition, which
// passes and explains itself identically, saving the hot path a level of
// indirection for the most common Trigger: a single exact filter.
func collapse(c condition) condition {
	if c.kind == condAll && len(c.children) == 1 {
		return c.children[0]
	}
	return c
}

func compileFilter(f *routing.Filter, path string) (condition, error) {
	var (
		dialects []string
		c        condition
		err      error
	)
	// The routing table allows exactly one dialect per filter; checking it
	// here too keeps a hand-built table from being half-evaluated.
	if f.Exact != nil {
		dialects = append(dialects, "exact")
		c = compileAttributeMap(condExact, f.Exact, path)
	}
	if f.Prefix != nil {
		dialects = append(dialects, "prefix")
		c = compileAttributeMap(condPrefix, f.Prefix, path)
	}
	if f.Suffix != nil {
		dialects = append(dialects, "suffix")
		c = compileAttributeMap(condSuffix, f.Suffix, path)
	}
	if f.All != nil {
		dialects = append(dialects, "all")
		c, err = compileList(condAll, f.All, path, "all")
	}
	if f.Any != nil {
		dialects = append(dialects, "any")
		c, err = compileList(condAny, f.Any, path, "any")
	}
	if f.Not != nil {
		dialects = append(dialects, "not")
		var child condition
		child, err = compileFilter(f.Not, path+".not")
		c = condition{kind: condNot, children: []condition{child}, label: path}
	}
	if f.CESQL != "" {
		dialects = append(dialects, "cesql")
		c = condition{kind: condCESQL, label: path}
		c.expr, err = cesql.Parse(f.CESQL)
		if err != nil {
			err = fmt.Errorf("%s.cesql: %w", path, err)
		}
	}
	if len(dialects) != 1 {
		return condition{}, fmt.Errorf("%s: exactly one dialect must be set, found %d (%s)", path, len(dialects), strings.Join(dialects, ", "))
	}
	return c, err
}

// compileAttributeMap compiles an exact, prefix or suffix map: every entry
// must hold, so it is an "all" of one condition per key, in key order so that
// explanations are deterministic.
func compileAttributeMap(kind condKind, m map[string]string, label string) condition {
	keys := sortedKeys(m)
	if len(keys) == 1 {
		return condition{kind: kind, attr: newAttribute(keys[0]), value: m[keys[0]], label: label}
	}
	all := condition{kind: condAll, label: label}
	for _, k := range keys {
		all.children = append(all.children, condition{kind: kind, attr: newAttribute(k), value: m[k], label: label})
	}
	return all
}

func compileList(kind condKind, filters []routing.Filter, path, dialect string) (condition, error) {
	c := condition{kind: kind, label: path}
	var errs []error
	for i := range filters {
		child, err := compileFilter(&filters[i], fmt.Sprintf("%s.%s[%d]", path, dialect, i))
		errs = append(errs, err)
		c.children = append(c.children, child)
	}
	return collapse(c), errors.Join(errs...)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// passes reports whether the event seen through v meets c. It is the hot path:
// it must not allocate.
func (c *condition) passes(v *eventView) bool {
	switch c.kind {
	case condExact:
		got, ok := v.get(c.attr)
		return ok && got == c.value
	case condPrefix:
		got, ok := v.get(c.attr)
		return ok && strings.HasPrefix(got, c.value)
	case condSuffix:
		got, ok := v.get(c.attr)
		return ok && strings.HasSuffix(got, c.value)
	case condPresent:
		_, ok := v.get(c.attr)
		return ok
	case condAll:
		for i := range c.children {
			if !c.children[i].passes(v) {
				return false
			}
		}
		return true
	case condAny:
		for i := range c.children {
			if c.children[i].passes(v) {
				return true
			}
		}
		return false
	case condNot:
		return !c.children[0].passes(v)
	case condCESQL:
		ok, err := c.expr.Evaluate(v.event)
		return ok && err == nil
	}
	return false
}
