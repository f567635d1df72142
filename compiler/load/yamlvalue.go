package load

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
)

// How the loader reads YAML, once for every command and every kind, so
// that build never meets a document validate passed and cannot convert:
//
//   - merge keys (<<) are merged, as YAML 1.1 and kubectl do: keys of the
//     mapping itself win, then those of earlier merged mappings;
//   - a key given twice in one mapping is an error, as kubectl makes it;
//   - aliases may expand a document to at most maxExpandedNodes nodes, or
//     ten times the nodes it is written with when that is more, and the
//     bytes they add to all documents read are bounded (see
//     InputBudget.ChargeAliases);
//   - every scalar is one JSON can hold (a string, a finite number of
//     float64 range, an int64, a boolean or null), and its tag one of the
//     core schema's: a custom tag, !!binary, or 1e400 is refused.

// maxExpandedNodes bounds what aliases may expand a document to. A
// "billion laughs" document of a few hundred bytes expands to billions.
const maxExpandedNodes = 100_000

// normalise applies the rules above to a parsed document in place, and
// reports whether it can be read.
func (c *chunk) normalise(doc *Document, root *yaml.Node) bool {
	n := &normaliser{doc: doc}
	if hasAlias(root) {
		// Only aliases make a node reachable twice, and a document
		// larger than it is written.
		n.merged = map[*yaml.Node]bool{}
	}
	n.mergeKeys(root)
	if len(n.diags) == 0 && n.firstAlias != nil {
		limit := max(maxExpandedNodes, 10*n.distinct)
		n.sizes = map[*yaml.Node]int{}
		if size := n.size(root, limit); size > limit {
			n.diags.Add(doc.Pos(n.firstAlias), "", "aliases expand this document to more than %d nodes; write the repeated parts out, or use fewer levels of aliases", limit)
		} else {
			c.aliasBytes = append(c.aliasBytes, aliasBytes{at: doc.Pos(n.firstAlias), n: n.addedBytes(root)})
		}
	}
	c.diags = append(c.diags, n.diags...)
	return len(n.diags) == 0
}

type normaliser struct {
	doc   *Document
	diags diag.List
	// merged holds every node visited, when aliases may lead to a node
	// twice; without aliases the document is a tree and it stays nil.
	merged     map[*yaml.Node]bool
	distinct   int // nodes visited
	sizes      map[*yaml.Node]int
	firstAlias *yaml.Node
}

// hasAlias reports whether a node below n, as parsed, is an alias.
func hasAlias(n *yaml.Node) bool {
	if n.Kind == yaml.AliasNode {
		return true
	}
	for _, c := range n.Content {
		if hasAlias(c) {
			return true
		}
	}
	return false
}

// linearKeys is the number of keys up to which a mapping's duplicate keys
// are found by comparing each with those before it, which for the small
// mappings of Kubernetes objects costs less than building a map.
const linearKeys = 16

// mergeKeys visits every node once: it merges merge keys, refuses
// duplicate keys and checks scalars.
func (n *normaliser) mergeKeys(node *yaml.Node) {
	if node == nil {
		return
	}
	if n.merged != nil {
		if n.merged[node] {
			return
		}
		n.merged[node] = true
	}
	n.distinct++
	switch node.Kind {
	case yaml.AliasNode:
		if n.firstAlias == nil {
			n.firstAlias = node
		}
		n.mergeKeys(node.Alias)
		return
	case yaml.ScalarNode:
		if _, err := Scalar(node); err != nil {
			n.diags.Add(n.doc.Pos(node), "", "%v", err)
		}
		return
	case yaml.SequenceNode:
		if node.Tag != "" && node.ShortTag() != "!!seq" {
			n.diags.Add(n.doc.Pos(node), "", "tag %s is not supported: a Kubernetes object holds lists, maps, strings, numbers, booleans and null; remove the tag", node.Tag)
		}
		for _, c := range node.Content {
			n.mergeKeys(c)
		}
		return
	case yaml.MappingNode:
	default:
		for _, c := range node.Content {
			n.mergeKeys(c)
		}
		return
	}
	if node.Tag != "" && node.ShortTag() != "!!map" {
		n.diags.Add(n.doc.Pos(node), "", "tag %s is not supported: a Kubernetes object holds lists, maps, strings, numbers, booleans and null; remove the tag", node.Tag)
	}
	var index map[string]*yaml.Node
	if len(node.Content) > 2*linearKeys {
		index = make(map[string]*yaml.Node, len(node.Content)/2)
	}
	var sources []*yaml.Node
	for i := 0; i+1 < len(node.Content); i += 2 {
		k, v := node.Content[i], node.Content[i+1]
		n.mergeKeys(v)
		if isMergeKey(k) {
			sources = append(sources, v)
			continue
		}
		if k.Kind != yaml.ScalarNode {
			n.diags.Add(n.doc.Pos(k), "", "a key must be a string, not a %s", nodeKind(k))
			continue
		}
		if prev := firstKey(node.Content[:i], index, k.Value); prev != nil {
			n.diags.Add(n.doc.Pos(k), "", "duplicate key %q: it is first given at line %d; give each key once", k.Value, prev.Line)
			continue
		}
		if index != nil {
			index[k.Value] = k
		}
	}
	if len(sources) == 0 {
		return
	}
	// The mapping's own keys, each once, then those of the merged
	// mappings that it does not set.
	var own []*yaml.Node
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(node.Content); i += 2 {
		k := node.Content[i]
		if isMergeKey(k) || k.Kind != yaml.ScalarNode {
			continue
		}
		if _, dup := first[k.Value]; dup {
			continue
		}
		first[k.Value] = k
		own = append(own, k, node.Content[i+1])
	}
	for _, src := range sources {
		src = resolve(src)
		var maps []*yaml.Node
		switch src.Kind {
		case yaml.MappingNode:
			maps = []*yaml.Node{src}
		case yaml.SequenceNode:
			for _, m := range src.Content {
				maps = append(maps, resolve(m))
			}
		}
		for _, m := range maps {
			if m == nil || m.Kind != yaml.MappingNode {
				n.diags.Add(n.doc.Pos(src), "", "a merge key (<<) takes a map or a list of maps")
				continue
			}
			for i := 0; i+1 < len(m.Content); i += 2 {
				k := m.Content[i]
				if _, taken := first[k.Value]; taken {
					continue
				}
				first[k.Value] = k
				own = append(own, k, m.Content[i+1])
			}
		}
	}
	node.Content = own
}

func isMergeKey(k *yaml.Node) bool {
	return k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge"
}

// firstKey returns the first key named key among a mapping's pairs, merge
// keys and keys that are not scalars left out; index, when not nil, holds
// them already.
func firstKey(pairs []*yaml.Node, index map[string]*yaml.Node, key string) *yaml.Node {
	if index != nil {
		return index[key]
	}
	for i := 0; i+1 < len(pairs); i += 2 {
		if k := pairs[i]; k.Value == key && k.Kind == yaml.ScalarNode && !isMergeKey(k) {
			return k
		}
	}
	return nil
}

// addedBytes returns the bytes of scalar text that aliases and merge keys
// add to root: what it expands to less what it is written with. A scalar
// of 64 KiB aliased 10,000 times is a 95 KB document that adds 655 MB.
func (n *normaliser) addedBytes(root *yaml.Node) int64 {
	written := int64(0)
	for node := range n.merged {
		written += int64(len(node.Value))
	}
	expanded := map[*yaml.Node]int64{}
	var bytesOf func(node *yaml.Node) int64
	bytesOf = func(node *yaml.Node) int64 {
		if node == nil {
			return 0
		}
		if s, ok := expanded[node]; ok {
			return s
		}
		s := int64(len(node.Value))
		if node.Kind == yaml.AliasNode {
			s += bytesOf(node.Alias)
		}
		for _, c := range node.Content {
			// Saturate rather than overflow: the node count bounds
			// the depth, not the bytes.
			s = min(s+bytesOf(c), math.MaxInt64/2)
		}
		expanded[node] = s
		return s
	}
	return max(bytesOf(root)-written, 0)
}

// size returns the number of nodes n expands to, counting past limit no
// further.
func (n *normaliser) size(node *yaml.Node, limit int) int {
	if node == nil {
		return 0
	}
	if s, ok := n.sizes[node]; ok {
		return s
	}
	n.sizes[node] = limit + 1 // a cycle counts as too large
	s := 1
	if node.Kind == yaml.AliasNode {
		s = n.size(node.Alias, limit)
	}
	for _, c := range node.Content {
		if s > limit {
			break
		}
		s += n.size(c, limit)
	}
	s = min(s, limit+1)
	n.sizes[node] = s
	return s
}

// jsonNumber matches a number as JSON writes it.
var jsonNumber = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// Scalar converts a scalar node to the value a Kubernetes object holds:
// a string, a json.Number, a bool or nil. Numbers keep their text when
// JSON can write it as it is, and are otherwise written in JSON's form
// (0x1F becomes 31); a number JSON cannot hold is an error, as is a tag
// outside YAML's core schema.
func Scalar(n *yaml.Node) (any, error) {
	switch tag := n.ShortTag(); tag {
	case "!!null":
		return nil, nil
	case "!!bool":
		// The common spellings skip Decode, which builds a decoder for
		// each call: a document of many scalars would spend most of its
		// load time and allocations there.
		switch n.Value {
		case "true":
			return true, nil
		case "false":
			return false, nil
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("%q is not a boolean: use true or false", n.Value)
		}
		return b, nil
	case "!!int":
		if isCanonicalInt(n.Value) {
			if _, err := strconv.ParseInt(n.Value, 10, 64); err == nil {
				return json.Number(n.Value), nil
			}
		}
		var i int64
		if err := n.Decode(&i); err != nil {
			return nil, fmt.Errorf("the integer %s is out of range: Kubernetes integers are 64-bit; quote it to keep it as a string", n.Value)
		}
		return json.Number(strconv.FormatInt(i, 10)), nil
	case "!!float":
		if jsonNumber.MatchString(n.Value) {
			if f, err := strconv.ParseFloat(n.Value, 64); err == nil && !math.IsInf(f, 0) {
				return json.Number(n.Value), nil
			}
		}
		var f float64
		if err := n.Decode(&f); err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("the number %s cannot be written in JSON: use a finite number within the range of a 64-bit float, or quote it to keep it as a string", n.Value)
		}
		if jsonNumber.MatchString(n.Value) {
			return json.Number(n.Value), nil
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "!!str", "!!timestamp":
		// A timestamp stays the text it is written as, as the API
		// server reads it.
		return n.Value, nil
	case "!!binary":
		return nil, fmt.Errorf("tag !!binary is not supported: write the base64 text as a plain string, as Secret data is")
	default:
		return nil, fmt.Errorf("tag %s is not supported: a Kubernetes object holds strings, numbers, booleans and null; remove the tag, or quote the value", n.Tag)
	}
}

// isCanonicalInt reports whether s is a decimal integer as
// strconv.FormatInt writes it: an optional minus, no leading zero, no
// underscore, and not -0. YAML reads other spellings (010, 0x1F, 1_000)
// differently from base 10, so they take the decoder's path.
func isCanonicalInt(s string) bool {
	digits := strings.TrimPrefix(s, "-")
	if digits == "" || digits[0] == '0' && (len(digits) > 1 || len(s) > 1) {
		return false
	}
	for i := 0; i < len(digits); i++ {
		if digits[i] < '0' || digits[i] > '9' {
			return false
		}
	}
	return true
}

// Generic converts a node of a loaded document to generic JSON as the
// API server would read it: maps, lists and Scalar's values. The loader
// has checked every document it returns, so that Generic fails on none.
func Generic(n *yaml.Node) (any, error) {
	n = resolve(n)
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return Generic(n.Content[0])
	case yaml.MappingNode:
		m := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			v, err := Generic(n.Content[i+1])
			if err != nil {
				return nil, err
			}
			m[n.Content[i].Value] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, len(n.Content))
		for i, c := range n.Content {
			v, err := Generic(c)
			if err != nil {
				return nil, err
			}
			l[i] = v
		}
		return l, nil
	case yaml.ScalarNode:
		v, err := Scalar(n)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}
