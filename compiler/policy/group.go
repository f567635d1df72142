package policy

import (
	"cuelang.org/go/cue"
)

// group is the policies an object is checked against at once: the
// unification of their constraints, and the fields any of them names.
type group struct {
	constrain cue.Value
	fields    fieldTree
	// first is a policy of the group, to name while checking; rest are
	// the selected policies that cannot be combined.
	first int
	rest  []*compiled
}

// groupCache holds one group per set of selected policies: objects of a
// kind mostly select the same ones.
type groupCache map[uint64]*group

// maxGrouped is how many policies a bit set can name; with more, every
// policy is checked on its own.
const maxGrouped = 64

// of returns the group for the selected policies, or nil when fewer than
// two of them can be combined.
func (gc groupCache) of(ctx *cue.Context, selected []*compiled) *group {
	var key uint64
	n := 0
	for _, p := range selected {
		if p.index >= maxGrouped {
			return nil
		}
		key |= 1 << p.index
		if !p.supplies {
			n++
		}
	}
	if n < 2 {
		return nil
	}
	if g, ok := gc[key]; ok {
		return g
	}
	g := &group{constrain: ctx.CompileString("_"), first: -1}
	fields := fieldTree{}
	for _, p := range selected {
		if p.supplies {
			g.rest = append(g.rest, p)
			continue
		}
		if g.first < 0 {
			g.first = p.index
			fields = p.fields
		} else {
			fields = union(fields, p.fields)
		}
		g.constrain = g.constrain.Unify(p.constrain)
	}
	g.fields = fields
	gc[key] = g
	return g
}

// union is the fields either tree names; a leaf (nil) takes the whole
// value.
func union(a, b fieldTree) fieldTree {
	if a == nil || b == nil {
		return nil
	}
	out := make(fieldTree, len(a)+len(b))
	for k, v := range a {
		out[k] = v
	}
	for k, v := range b {
		if prev, ok := out[k]; ok {
			out[k] = union(prev, v)
		} else {
			out[k] = v
		}
	}
	return out
}

// suppliesValues reports whether a constraint holds a concrete scalar of
// its own at any field.
func suppliesValues(v cue.Value, depth int) bool {
	if depth > maxTreeDepth {
		return true
	}
	if v.IncompleteKind() != cue.StructKind {
		return v.IsConcrete()
	}
	it, err := v.Fields(cue.Optional(true))
	if err != nil {
		return true
	}
	for it.Next() {
		if suppliesValues(it.Value(), depth+1) {
			return true
		}
	}
	return false
}
