package router

import (
	"fmt"
	"strings"
)

// Verdict says whether one Trigger matched an event, and why.
type Verdict struct {
	// Index is the Trigger's position in the slice given to Compile.
	Index   int
	Matched bool
	// Reason names the filter (by its path in the Trigger, such as
	// "filters[1].not") and what was compared: `filters[0]: exact type:
	// "a" != "b"` or `filters[2]: cesql "x > 1": evaluation error: ...`.
	Reason string
}

// explain evaluates c like evaluate does, and also says why. It is not on
// the hot path and may allocate.
func (c *condition) explain(v *eventView) (result, string) {
	switch c.kind {
	case condExact, condPrefix, condSuffix, condLegacyExact, condLegacyAny:
		return c.explainAttribute(v)
	case condAll:
		r := noFilter
		reasons := make([]string, 0, len(c.children))
		for i := range c.children {
			var why string
			r, why = c.children[i].explain(v)
			if r == fail || r == abort {
				return r, why
			}
			reasons = append(reasons, why)
		}
		if len(reasons) == 0 {
			return r, c.label + ": all: no filters, passes"
		}
		return r, strings.Join(reasons, "; ")
	case condAny:
		r := noFilter
		reasons := make([]string, 0, len(c.children))
		for i := range c.children {
			var why string
			r, why = c.children[i].explain(v)
			if r == pass || r == abort {
				return r, why
			}
			reasons = append(reasons, why)
		}
		if len(reasons) == 0 {
			return r, c.label + ": any: no filters, passes"
		}
		if r == noFilter {
			return r, c.label + ": any: none passed, the last has no filter, so it passes: " + strings.Join(reasons, "; ")
		}
		return r, c.label + ": any: none passed: " + strings.Join(reasons, "; ")
	case condNot:
		// The child's label ends in ".not", so its reason already reads as
		// the negated fact: "filters[1].not: exact type: "a" == "a"" fails.
		r, why := c.children[0].explain(v)
		switch r {
		case pass:
			return fail, why
		case fail:
			return pass, why
		}
		return r, why
	case condCESQL:
		ok, err := c.expr.Evaluate(v.cesqlEvent(c.readsTTL))
		if err != nil {
			r := cesqlFailure(err)
			if r == abort {
				return r, fmt.Sprintf("%s: cesql %q: %v; Knative's filter stops on it, so the Trigger does not receive the event", c.label, c.expr.String(), err)
			}
			return r, fmt.Sprintf("%s: cesql %q: %v", c.label, c.expr.String(), err)
		}
		return resultOf(ok), fmt.Sprintf("%s: cesql %q: %t", c.label, c.expr.String(), ok)
	case condNoFilter:
		return noFilter, c.label + ": not of an empty filter: passes"
	}
	return fail, c.label + ": unknown filter"
}

func (c *condition) explainAttribute(v *eventView) (result, string) {
	dialect := map[condKind]string{condExact: "exact", condPrefix: "prefix", condSuffix: "suffix", condLegacyExact: "attribute", condLegacyAny: "attribute"}[c.kind]
	head := fmt.Sprintf("%s: %s %s", c.label, dialect, c.attr.name)
	got, isString, ok := v.lookup(c.attr)
	if !ok {
		return fail, head + ": missing"
	}
	switch c.kind {
	case condExact:
		if got == c.value {
			return pass, fmt.Sprintf("%s: %q == %q", head, got, c.value)
		}
		return fail, fmt.Sprintf("%s: %q != %q", head, got, c.value)
	case condLegacyExact:
		if !isString {
			return fail, fmt.Sprintf("%s: %s is not a string, and filter.attributes compares strings only", head, got)
		}
		if got == c.value {
			return pass, fmt.Sprintf("%s: %q == %q", head, got, c.value)
		}
		return fail, fmt.Sprintf("%s: %q != %q", head, got, c.value)
	case condPrefix:
		if strings.HasPrefix(got, c.value) {
			return pass, fmt.Sprintf("%s: %q starts with %q", head, got, c.value)
		}
		return fail, fmt.Sprintf("%s: %q does not start with %q", head, got, c.value)
	case condSuffix:
		if strings.HasSuffix(got, c.value) {
			return pass, fmt.Sprintf("%s: %q ends with %q", head, got, c.value)
		}
		return fail, fmt.Sprintf("%s: %q does not end with %q", head, got, c.value)
	}
	if isString && got == "" {
		return fail, head + ": empty, and an empty value asks for one that is not"
	}
	return pass, fmt.Sprintf("%s: present (%q)", head, got)
}
