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
	condExact       condKind = iota // attribute present and equal to value
	condPrefix                      // attribute present and starting with value
	condSuffix                      // attribute present and ending with value
	condLegacyExact                 // filter.attributes: attribute a string equal to value
	condLegacyAny                   // filter.attributes, empty value: attribute present and not ""
	condAll                         // every child passes (none: no filter)
	condAny                         // some child passes (none: no filter)
	condNot                         // the only child fails
	condCESQL                       // the expression yields true without error
	condNoFilter                    // Knative's "no filter": passes, and not leaves it alone
	condDropped                     // a filter Knative's dispatcher leaves out of its list
)

// result is the outcome of a filter as Knative's dispatcher has it: besides
// pass and fail, a filter may have nothing to say (noFilter: a not or a list
// of filters Knative left out), which lets the event through unless a
// sibling fails it; and Knative's CESQL filter panics on a non-Boolean
// result, which abandons the whole Trigger.
type result uint8

const (
	fail result = iota
	pass
	noFilter
	abort
)

func resultOf(ok bool) result {
	if ok {
		return pass
	}
	return fail
}

// delivers reports whether a Trigger whose filter has result r receives the
// event: everything but a failure or an abandoned filter does.
func (r result) delivers() bool { return r == pass || r == noFilter }

// condition is one compiled node of a Trigger's filter.
type condition struct {
	kind     condKind
	attr     attribute
	value    string
	children []condition
	expr     cesql.Expression
	// readsTTL says that expr may read the Broker's TTL extension, so that
	// it must be evaluated on a copy of the event without it. CESQL reads
	// attributes by name only, so an expression that does not spell the
	// name (in any case) cannot see it and is evaluated on the event itself.
	readsTTL bool
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
			if c.kind != condDropped {
				root.children = append(root.children, c)
			}
		}
		return collapse(root), errors.Join(errs...)
	}
	root := condition{kind: condAll, label: "attributes"}
	for _, name := range sortedKeys(t.Attributes) {
		c := condition{kind: condLegacyExact, attr: newAttribute(name), value: t.Attributes[name], label: "attributes"}
		if c.value == "" {
			c.kind = condLegacyAny
		}
		root.children = append(root.children, c)
	}
	return collapse(root), nil
}

// collapse replaces an "all" or "any" of one condition with that condition,
// which passes and explains itself identically (as Knative's dispatcher
// does), saving the hot path a level of indirection for the most common
// Trigger: a single exact filter.
func collapse(c condition) condition {
	if (c.kind == condAll || c.kind == condAny) && len(c.children) == 1 {
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
		if child.kind == condDropped {
			// Knative's not of a filter it left out has nothing to say.
			c = condition{kind: condNoFilter, label: path}
		}
	}
	if f.CESQL != "" {
		dialects = append(dialects, "cesql")
		c = condition{kind: condCESQL, label: path, readsTTL: strings.Contains(strings.ToLower(f.CESQL), brokerTTLExtension)}
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
// explanations are deterministic. Knative's dispatcher cannot build such a
// filter with an empty name or value and leaves it out of its list, which
// its admission lets through: so does knc.
func compileAttributeMap(kind condKind, m map[string]string, label string) condition {
	keys := sortedKeys(m)
	for _, k := range keys {
		if k == "" || m[k] == "" {
			return condition{kind: condDropped, label: label}
		}
	}
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
		if child.kind != condDropped {
			c.children = append(c.children, child)
		}
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

// passes reports whether the event seen through v gets through c. It is
// the hot path: it must not allocate.
func (c *condition) passes(v *eventView) bool { return c.evaluate(v).delivers() }

// evaluate decides c as Knative's dispatcher does: the children of all and
// any in order, stopping at the first that fails (all) or passes (any), the
// result of the last child evaluated otherwise.
func (c *condition) evaluate(v *eventView) result {
	switch c.kind {
	case condExact:
		got, ok := v.get(c.attr)
		return resultOf(ok && got == c.value)
	case condPrefix:
		got, ok := v.get(c.attr)
		return resultOf(ok && strings.HasPrefix(got, c.value))
	case condSuffix:
		got, ok := v.get(c.attr)
		return resultOf(ok && strings.HasSuffix(got, c.value))
	case condLegacyExact:
		got, isString, ok := v.lookup(c.attr)
		return resultOf(ok && isString && got == c.value)
	case condLegacyAny:
		got, isString, ok := v.lookup(c.attr)
		return resultOf(ok && !(isString && got == ""))
	case condAll:
		r := noFilter
		for i := range c.children {
			if r = c.children[i].evaluate(v); r == fail || r == abort {
				return r
			}
		}
		return r
	case condAny:
		r := noFilter
		for i := range c.children {
			if r = c.children[i].evaluate(v); r == pass || r == abort {
				return r
			}
		}
		return r
	case condNot:
		switch r := c.children[0].evaluate(v); r {
		case pass:
			return fail
		case fail:
			return pass
		default:
			return r
		}
	case condCESQL:
		ok, err := c.expr.Evaluate(v.cesqlEvent(c.readsTTL))
		if err != nil {
			return cesqlFailure(err)
		}
		return resultOf(ok)
	case condNoFilter:
		return noFilter
	}
	return fail
}

// cesqlFailure is the result of an expression that did not yield a
// Boolean: Knative's filter fails on an evaluation error, and panics on a
// value that is not a Boolean (or a panic of the library), so that the
// Trigger does not receive the event whatever encloses the expression.
func cesqlFailure(err error) result {
	if errors.Is(err, cesql.ErrNotBoolean) || errors.Is(err, cesql.ErrEvaluationPanicked) {
		return abort
	}
	return fail
}
