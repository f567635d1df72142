package load

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
)

// tree is a document's nodes in compact form. A yaml.v3 node takes about
// 180 bytes with its slot in its parent, whatever it holds: a list of a
// million one-digit numbers, two megabytes of text, took 180 megabytes to
// hold. Here a node takes 36 bytes plus its text, and the text of all
// scalars shares one string. Comments and anchor names, which no later
// stage reads, are left out; positions, tags, styles and the shape of the
// document (an alias still leads to its anchor's node) are kept.
type tree struct {
	nodes []cnode
	// kids holds the indexes of each node's children, one run per node.
	kids []uint32
	// text holds the values of every scalar, one after the other.
	text string
	tags []string
	// files names the files of nodes that lie in another file than the
	// document's: files[k-1] for cnode.file k.
	files []string
	// shared says that a node may be reached twice, through an alias or
	// a merge key; otherwise the nodes form a tree.
	shared bool
}

type cnode struct {
	line, column int32
	// value and length locate the node's value in tree.text.
	value, length uint32
	// first and count locate the children in tree.kids; an alias's
	// first is the index of the node it leads to.
	first, count uint32
	tag          uint16
	file         uint16
	kind         uint8
	style        uint8
}

// compacter turns a yaml.v3 tree into a tree.
type compacter struct {
	t         *tree
	text      strings.Builder
	tagIndex  map[string]uint16
	fileIndex map[string]uint16
	nodeFiles map[*yaml.Node]string
	// seen maps the nodes already placed to their index, when aliases
	// or merge keys may lead to a node twice.
	seen map[*yaml.Node]uint32
}

// compact returns the compact form of root, or nil when the document is
// too odd to be held so (more than 65,535 distinct tags or files), in
// which case it stays as it is.
func compact(root *yaml.Node, nodeFiles map[*yaml.Node]string) *tree {
	c := &compacter{t: &tree{}, tagIndex: map[string]uint16{}, fileIndex: map[string]uint16{}, nodeFiles: nodeFiles}
	if hasAlias(root) {
		c.seen = map[*yaml.Node]uint32{}
		c.t.shared = true
	} else {
		// A tree: count first so that every slice is allocated once,
		// at its size.
		nodes, text := countTree(root)
		c.t.nodes = make([]cnode, 0, nodes)
		c.t.kids = make([]uint32, 0, nodes)
		c.text.Grow(text)
	}
	if _, ok := c.add(root); !ok {
		return nil
	}
	c.t.text = c.text.String()
	if c.seen != nil {
		// Grown by appending: give back what is unused.
		c.t.nodes = append([]cnode(nil), c.t.nodes...)
		c.t.kids = append([]uint32(nil), c.t.kids...)
	}
	return c.t
}

func countTree(n *yaml.Node) (nodes, text int) {
	nodes, text = 1, len(n.Value)
	for _, c := range n.Content {
		cn, ct := countTree(c)
		nodes += cn
		text += ct
	}
	return nodes, text
}

func (c *compacter) add(n *yaml.Node) (uint32, bool) {
	if c.seen != nil {
		if i, ok := c.seen[n]; ok {
			return i, true
		}
	}
	t := c.t
	if len(t.nodes) >= math.MaxUint32 || c.text.Len()+len(n.Value) > math.MaxUint32 {
		return 0, false
	}
	i := uint32(len(t.nodes))
	if c.seen != nil {
		c.seen[n] = i
	}
	tag, ok := intern(c.tagIndex, &t.tags, n.Tag)
	if !ok {
		return 0, false
	}
	var file uint16
	if f, in := c.nodeFiles[n]; in {
		if file, ok = intern(c.fileIndex, &t.files, f); !ok {
			return 0, false
		}
		file++
	}
	t.nodes = append(t.nodes, cnode{
		line: clamp32(n.Line), column: clamp32(n.Column),
		value: uint32(c.text.Len()), length: uint32(len(n.Value)),
		tag: tag, file: file, kind: uint8(n.Kind), style: uint8(n.Style),
	})
	c.text.WriteString(n.Value)
	if n.Kind == yaml.AliasNode && n.Alias != nil {
		target, ok := c.add(n.Alias)
		if !ok {
			return 0, false
		}
		t.nodes[i].first = target
		return i, true
	}
	if len(n.Content) == 0 {
		return i, true
	}
	first := len(t.kids)
	t.kids = append(t.kids, make([]uint32, len(n.Content))...)
	t.nodes[i].first, t.nodes[i].count = uint32(first), uint32(len(n.Content))
	for j, child := range n.Content {
		k, ok := c.add(child)
		if !ok {
			return 0, false
		}
		t.kids[first+j] = k
	}
	return i, true
}

func intern(index map[string]uint16, list *[]string, s string) (uint16, bool) {
	if i, ok := index[s]; ok {
		return i, true
	}
	if len(*list) >= math.MaxUint16 {
		return 0, false
	}
	i := uint16(len(*list))
	index[s] = i
	*list = append(*list, s)
	return i, true
}

func clamp32(v int) int32 {
	return int32(min(max(v, 0), math.MaxInt32))
}

// node is a node of a tree, by index.
type node struct {
	t *tree
	i uint32
}

func (n node) c() *cnode { return &n.t.nodes[n.i] }

// resolve follows aliases.
func (n node) resolve() node {
	for n.t.nodes[n.i].kind == uint8(yaml.AliasNode) {
		n.i = n.t.nodes[n.i].first
	}
	return n
}

func (n node) kind() yaml.Kind { return yaml.Kind(n.c().kind) }
func (n node) tag() string     { return n.t.tags[n.c().tag] }
func (n node) value() string {
	c := n.c()
	return n.t.text[c.value : c.value+c.length]
}
func (n node) len() int { return int(n.c().count) }
func (n node) child(j int) node {
	return node{n.t, n.t.kids[n.c().first+uint32(j)]}
}

// pos returns the node's position, in file unless the node lies in
// another file.
func (n node) pos(file string) diag.Pos {
	c := n.c()
	if c.file > 0 {
		file = n.t.files[c.file-1]
	}
	return diag.Pos{File: file, Line: int(c.line), Column: int(c.column)}
}

// field returns the value under seg, a map key or a list index, as child
// does for yaml.v3 nodes.
func (n node) field(seg string) (node, bool) {
	n = n.resolve()
	switch n.kind() {
	case yaml.MappingNode:
		for j := 0; j+1 < n.len(); j += 2 {
			if n.child(j).value() == seg {
				return n.child(j + 1), true
			}
		}
	case yaml.SequenceNode:
		if j, err := strconv.Atoi(seg); err == nil && j >= 0 && j < n.len() {
			return n.child(j), true
		}
	}
	return node{}, false
}

// scalar returns the text of the scalar under key, as the function
// scalar does for yaml.v3 nodes: "" when it is null or not a scalar.
func (n node) scalar(key string) string {
	v, ok := n.field(key)
	if !ok {
		return ""
	}
	if v = v.resolve(); v.kind() != yaml.ScalarNode || v.tag() == "!!null" {
		return ""
	}
	return v.value()
}

// key returns the key node under seg of a mapping.
func (n node) key(seg string) (node, bool) {
	n = n.resolve()
	if n.kind() != yaml.MappingNode {
		return node{}, false
	}
	for j := 0; j+1 < n.len(); j += 2 {
		if n.child(j).value() == seg {
			return n.child(j), true
		}
	}
	return node{}, false
}

// copy builds the yaml.v3 node of n and what lies below it.
func (n node) copy() *yaml.Node {
	var built map[uint32]*yaml.Node
	if n.t.shared {
		built = map[uint32]*yaml.Node{}
	}
	return n.yamlNode(built)
}

// yamlNode builds the yaml.v3 node of n and what lies below it. Nodes
// reached twice, through aliases, are built once when built is not nil.
func (n node) yamlNode(built map[uint32]*yaml.Node) *yaml.Node {
	if y, ok := built[n.i]; ok {
		return y
	}
	c := n.c()
	y := &yaml.Node{
		Kind: yaml.Kind(c.kind), Style: yaml.Style(c.style), Tag: n.tag(), Value: n.value(),
		Line: int(c.line), Column: int(c.column),
	}
	if built != nil {
		built[n.i] = y
	}
	if y.Kind == yaml.AliasNode {
		y.Alias = node{n.t, c.first}.yamlNode(built)
		return y
	}
	if c.count > 0 {
		y.Content = make([]*yaml.Node, c.count)
		for j := range y.Content {
			y.Content[j] = n.child(j).yamlNode(built)
		}
	}
	return y
}

// generic converts n as Generic converts a yaml.v3 node; scratch is
// reused for each scalar.
func (n node) generic(scratch *yaml.Node) (any, error) {
	n = n.resolve()
	switch n.kind() {
	case yaml.DocumentNode:
		if n.len() == 0 {
			return nil, nil
		}
		return n.child(0).generic(scratch)
	case yaml.MappingNode:
		m := make(map[string]any, n.len()/2)
		for j := 0; j+1 < n.len(); j += 2 {
			v, err := n.child(j + 1).generic(scratch)
			if err != nil {
				return nil, err
			}
			m[n.child(j).value()] = v
		}
		return m, nil
	case yaml.SequenceNode:
		l := make([]any, n.len())
		for j := range l {
			v, err := n.child(j).generic(scratch)
			if err != nil {
				return nil, err
			}
			l[j] = v
		}
		return l, nil
	case yaml.ScalarNode:
		*scratch = yaml.Node{Kind: yaml.ScalarNode, Style: yaml.Style(n.c().style), Tag: n.tag(), Value: n.value()}
		v, err := Scalar(scratch)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n.c().line, err)
		}
		return v, nil
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.c().line)
}

// Value is a node of a document, read from the compact form without
// building yaml.v3 nodes. Aliases are followed.
type Value struct{ n node }

// Value returns the object's mapping node.
func (d *Document) Value() Value {
	if d.tree != nil {
		return Value{node{d.tree, 0}.resolve()}
	}
	// Not compacted: read a compact copy.
	t := compact(d.root, nil)
	if t == nil {
		return Value{}
	}
	return Value{node{t, 0}.resolve()}
}

// Valid reports whether v is a node, which the Value of an empty
// document is not.
func (v Value) Valid() bool { return v.n.t != nil }

// Kind is the node's kind: mapping, sequence, scalar or document.
func (v Value) Kind() yaml.Kind { return v.n.kind() }

// Len is the number of nodes below v: keys and values of a mapping.
func (v Value) Len() int { return v.n.len() }

// At returns the i-th node below v.
func (v Value) At(i int) Value { return Value{v.n.child(i).resolve()} }

// Text is a scalar's value as written.
func (v Value) Text() string { return v.n.value() }

// ShortTag is the node's tag, as yaml.Node.ShortTag gives it.
func (v Value) ShortTag() string {
	y := yaml.Node{Kind: v.n.kind(), Style: yaml.Style(v.n.c().style), Tag: v.n.tag(), Value: v.n.value()}
	return y.ShortTag()
}

// Generic converts v as Generic converts a yaml.v3 node.
func (v Value) Generic() (any, error) {
	if !v.Valid() {
		return nil, nil
	}
	return v.n.generic(&yaml.Node{})
}
