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
func pruned(n *yaml.Node, tree fieldTree) (any, error) {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if tree == nil || n == nil || n.Kind != yaml.MappingNode {
		return load.Generic(n)
	}
	out := make(map[string]any, len(tree))
	for i := 0; i+1 < len(n.Content); i += 2 {
		sub, ok := tree[n.Content[i].Value]
		if !ok {
			continue
		}
		v, err := pruned(n.Content[i+1], sub)
		if err != nil {
			return nil, err
		}
		out[n.Content[i].Value] = v
	}
	return out, nil
}

// appendKey writes what pruned would convert, as text that is equal for
// equal values: each scalar with its tag, so that "3" and 3 differ. It
// lets a verdict be found again without converting the object.
func appendKey(b []byte, n *yaml.Node, tree fieldTree) []byte {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	if n == nil {
		return append(b, '~')
	}
	switch n.Kind {
	case yaml.MappingNode:
		b = append(b, '{')
		for i := 0; i+1 < len(n.Content); i += 2 {
			sub := tree
			if tree != nil {
				var ok bool
				if sub, ok = tree[n.Content[i].Value]; !ok {
					continue
				}
			}
			b = strconv.AppendQuote(b, n.Content[i].Value)
			b = append(b, ':')
			b = appendKey(b, n.Content[i+1], sub)
			b = append(b, ',')
		}
		return append(b, '}')
	case yaml.SequenceNode:
		b = append(b, '[')
		for _, c := range n.Content {
			b = appendKey(b, c, nil)
			b = append(b, ',')
		}
		return append(b, ']')
	case yaml.DocumentNode:
		if len(n.Content) > 0 {
			return appendKey(b, n.Content[0], tree)
		}
		return append(b, '~')
	}
	b = append(b, n.ShortTag()...)
	return strconv.AppendQuote(b, n.Value)
}
