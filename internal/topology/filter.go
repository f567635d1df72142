package topology

import (
	"maps"
	"slices"
	"strings"

	"github.com/knc-dev/knc/internal/routing"
)

// DescribeFilter writes the filter a Trigger applies as one CloudEvents
// SQL style expression, the form every dialect can be read in: exact
// becomes =, prefix and suffix become LIKE, all and any become AND and OR,
// an attribute filter's empty value becomes EXISTS. attributes is
// spec.filter.attributes and filters spec.filters, in the routing table's
// form; as the runtime does, filters win when both are set. Each entry of
// filters is written with every dialect it sets. It is empty when the
// Trigger passes every event.
func DescribeFilter(attributes map[string]string, filters []routing.Filter) string {
	if len(filters) > 0 {
		expr, _ := join(filters, " AND ")
		return expr
	}
	return describeAttributes(attributes)
}

func describeAttributes(attrs map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		if v := attrs[k]; v == "" {
			parts = append(parts, "EXISTS "+k)
		} else {
			parts = append(parts, k+" = "+quote(v))
		}
	}
	return strings.Join(parts, " AND ")
}

// condition is one part of an expression; a compound one joins several
// conditions and is parenthesised inside another.
type condition struct {
	expr     string
	compound bool
}

// join writes filters joined by op.
func join(fs []routing.Filter, op string) (string, bool) {
	conds := make([]condition, len(fs))
	for i, f := range fs {
		conds[i] = filter(f)
	}
	return joinConditions(conds, op)
}

func joinConditions(conds []condition, op string) (string, bool) {
	if len(conds) == 1 {
		return conds[0].expr, conds[0].compound
	}
	parts := make([]string, len(conds))
	for i, c := range conds {
		parts[i] = c.expr
		if c.compound {
			parts[i] = "(" + c.expr + ")"
		}
	}
	return strings.Join(parts, op), true
}

func filter(f routing.Filter) condition {
	var conds []condition
	add := func(m map[string]string, cond func(k, v string) string) {
		for _, k := range slices.Sorted(maps.Keys(m)) {
			conds = append(conds, condition{expr: cond(k, m[k])})
		}
	}
	add(f.Exact, func(k, v string) string { return k + " = " + quote(v) })
	add(f.Prefix, func(k, v string) string { return k + " LIKE " + quote(likeEscape(v)+"%") })
	add(f.Suffix, func(k, v string) string { return k + " LIKE " + quote("%"+likeEscape(v)) })
	if len(f.All) > 0 {
		expr, compound := join(f.All, " AND ")
		conds = append(conds, condition{expr, compound})
	}
	if len(f.Any) > 0 {
		expr, compound := join(f.Any, " OR ")
		conds = append(conds, condition{expr, compound})
	}
	if f.Not != nil {
		conds = append(conds, condition{expr: "NOT (" + filter(*f.Not).expr + ")"})
	}
	if f.CESQL != "" {
		// Its own precedence is unknown here: parenthesise it when it
		// is combined with anything.
		conds = append(conds, condition{expr: f.CESQL, compound: true})
	}
	if len(conds) == 0 {
		return condition{expr: "TRUE"}
	}
	expr, compound := joinConditions(conds, " AND ")
	return condition{expr, compound}
}

// quote writes a CloudEvents SQL string literal.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
}

// likeEscape escapes LIKE's wildcards, which prefix and suffix values match
// literally.
func likeEscape(s string) string { return likeEscaper.Replace(s) }

var likeEscaper = strings.NewReplacer(`\`, `\\`, "%", `\%`, "_", `\_`)
