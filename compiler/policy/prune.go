package policy

import (
	"strconv"

	"cuelang.org/go/cue"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/load"
)

// fieldTree is the fields a constraint names, nested as in the object. A
// leaf (nil children) keeps the object's whole value at that field: the
// constraint is not a plain struct there, such as _, a definition with
// patterns, or a scalar bound.
type fieldTree map[string]fieldTree

// maxTreeDepth stops the walk of a recursive definition.
const maxTreeDepth = 16

// treeOf returns the fields constrain names, or nil when it must see the
// whole object.
func treeOf(v cue.Value, depth int) fieldTree {
	if depth > maxTreeDepth || v.IncompleteKind() != cue.StructKind || hasPattern(v) {
		return nil
	}
	it, err := v.Fields(cue.Optional(true), cue.Definitions(false), cue.Hidden(false))
	if err != nil {
		return nil
	}
	t := fieldTree{}
	for it.Next() {
		sel := it.Selector()
		if sel.IsDefinition() || sel.PkgPath() != "" {
			continue
		}
		t[sel.Unquoted()] = treeOf(it.Value(), depth+1)
	}
	if len(t) == 0 {
		return nil
	}
	return t
}

// hasPattern reports whether v constrains fields it does not name, as
// [string]: T or an open definition's ... does; then the whole value
// counts.
func hasPattern(v cue.Value) bool {
	return v.LookupPath(cue.MakePath(cue.AnyString)).Exists()
}

// pruned converts of an object's YAML only what tree names: unifying a
// constraint with three fields of an object is cheaper than with all of
// it, and the result is the same, as CUE checks each field on its own.
func pruned(n load.Value, tree fieldTree) (any, error) {
	if tree == nil || !n.Valid() || n.Kind() != yaml.MappingNode {
		return n.Generic()
	}
	out := make(map[string]any, len(tree))
	for i := 0; i+1 < n.Len(); i += 2 {
		key := n.At(i).Text()
		sub, ok := tree[key]
		if !ok {
			continue
		}
		v, err := pruned(n.At(i+1), sub)
		if err != nil {
			return nil, err
		}
		out[key] = v
	}
	return out, nil
}

// appendKey writes what pruned would convert, as text that is equal for
// equal values: each scalar with its tag, so that "3" and 3 differ. It
// lets a verdict be found again without converting the object.
func appendKey(b []byte, n load.Value, tree fieldTree) []byte {
	if !n.Valid() {
		return append(b, '~')
	}
	switch n.Kind() {
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < n.Len(); i += 2 {
			key := n.At(i).Text()
			sub := tree
			if tree != nil {
				var ok bool
				if sub, ok = tree[key]; !ok {
					continue
				}
			}
			b = strconv.AppendQuote(b, key)
			b = append(b, ':')
			b = appendKey(b, n.At(i+1), sub)
			b = append(b, ',')
		}
		return append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for i := range n.Len() {
			b = appendKey(b, n.At(i), nil)
			b = append(b, ',')
		}
		return append(b, ']')
	case yaml.DocumentNode:
		if n.Len() > 0 {
			return appendKey(b, n.At(0), tree)
		}
		return append(b, '~')
	}
	b = append(b, n.ShortTag()...)
	return strconv.AppendQuote(b, n.Text())
}
