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

// explain evaluates c like passes does, and also says why. It is not on the
// hot path and may allocate.
func (c *condition) explain(v *eventView) (bool, string) {
	switch c.kind {
	case condExact, condPrefix, condSuffix, condPresent:
		return c.explainAttribute(v)
	case condAll:
		reasons := make([]string, 0, len(c.children))
		for i := range c.children {
			ok, why := c.children[i].explain(v)
			if !ok {
				return false, why
			}
			reasons = append(reasons, why)
		}
		if len(reasons) == 0 {
			return true, c.label + ": all: no filters, passes"
		}
		return true, strings.Join(reasons, "; ")
	case condAny:
		reasons := make([]string, 0, len(c.children))
		for i := range c.children {
			ok, why := c.children[i].explain(v)
			if ok {
				return true, why
			}
			reasons = append(reasons, why)
		}
		if len(reasons) == 0 {
			return false, c.label + ": any: no filters, fails"
		}
		return false, c.label + ": any: none passed: " + strings.Join(reasons, "; ")
	case condNot:
		// The child's label ends in ".not", so its reason already reads as
		// the negated fact: "filters[1].not: exact type: "a" == "a"" fails.
		ok, why := c.children[0].explain(v)
		return !ok, why
	case condCESQL:
		ok, err := c.expr.Evaluate(v.event)
		if err != nil {
			return false, fmt.Sprintf("%s: cesql %q: %v", c.label, c.expr.String(), err)
		}
		return ok, fmt.Sprintf("%s: cesql %q: %t", c.label, c.expr.String(), ok)
	}
	return false, c.label + ": unknown filter"
}

func (c *condition) explainAttribute(v *eventView) (bool, string) {
	dialect := map[condKind]string{condExact: "exact", condPrefix: "prefix", condSuffix: "suffix", condPresent: "present"}[c.kind]
	if c.label == "attributes" {
		dialect = "attribute"
	}
	head := fmt.Sprintf("%s: %s %s", c.label, dialect, c.attr.name)
	got, ok := v.get(c.attr)
	if !ok {
		return false, head + ": missing"
	}
	switch c.kind {
	case condExact:
		if got == c.value {
			return true, fmt.Sprintf("%s: %q == %q", head, got, c.value)
		}
		return false, fmt.Sprintf("%s: %q != %q", head, got, c.value)
	case condPrefix:
		if strings.HasPrefix(got, c.value) {
			return true, fmt.Sprintf("%s: %q starts with %q", head, got, c.value)
		}
		return false, fmt.Sprintf("%s: %q does not start with %q", head, got, c.value)
	case condSuffix:
		if strings.HasSuffix(got, c.value) {
			return true, fmt.Sprintf("%s: %q ends with %q", head, got, c.value)
		}
		return false, fmt.Sprintf("%s: %q does not end with %q", head, got, c.value)
	}
	return true, fmt.Sprintf("%s: present (%q)", head, got)
}
