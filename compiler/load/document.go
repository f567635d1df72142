package load

import (
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
)

// Document is one object read from a file.
type Document struct {
	// File is the path the document was read from, as the loader was given it
	// or found it while walking a directory.
	File string
	// Index is the document's 0-based position in its file.
	Index int

	APIVersion string
	Kind       string
	Name       string
	Namespace  string

	// root is the object's mapping node, as parsed, until Compact; every
	// node keeps its line and column.
	root *yaml.Node
	// nodeFiles names the file of nodes that come from another file than
	// File: a rendered object's fields that a kustomize patch set.
	nodeFiles map[*yaml.Node]string
	// tree holds the nodes after Compact, which drops root: a document is
	// compacted when tree is set.
	tree *tree
}

// NewDocument returns the document of an object whose root is n, read from
// file.
func NewDocument(file string, n *yaml.Node) *Document {
	doc := &Document{File: file, root: n, APIVersion: scalar(n, "apiVersion"), Kind: scalar(n, "kind")}
	if md := child(n, "metadata"); md != nil {
		doc.Name = scalar(md, "name")
		doc.Namespace = scalar(md, "namespace")
	}
	return doc
}

// Compact replaces the document's yaml.v3 nodes with a form that takes a
// fifth of their memory, once nothing will change them: the loader
// compacts every document it returns. Positions, values, tags and styles
// are kept; comments and anchor names are not. After Compact, Node and
// Lookup return copies.
func (d *Document) Compact() {
	if d.root == nil {
		return
	}
	if t := compact(d.root, d.nodeFiles); t != nil {
		d.tree, d.root, d.nodeFiles = t, nil, nil
	}
}

// Node returns the object's mapping node. Once the document is compacted
// it is a copy built for the caller, which costs as much as the document
// did before; hold it only while it is needed, and prefer PosOf, Generic
// and Decode, which read the compact form.
func (d *Document) Node() *yaml.Node {
	if d.tree == nil {
		return d.root
	}
	return node{d.tree, 0}.copy()
}

// Generic converts the object to generic JSON, as load.Generic does.
func (d *Document) Generic() (any, error) {
	if d.tree == nil {
		return Generic(d.root)
	}
	return node{d.tree, 0}.generic(&yaml.Node{})
}

// SetNodeFile says that n, whose Line and Column are set, lies in file
// rather than in the document's File. It must come before Compact.
func (d *Document) SetNodeFile(n *yaml.Node, file string) {
	if d.nodeFiles == nil {
		d.nodeFiles = map[*yaml.Node]string{}
	}
	d.nodeFiles[n] = file
}

// Pos returns the position of n, a node of the document as parsed (before
// Compact), in the document's file.
func (d *Document) Pos(n *yaml.Node) diag.Pos {
	if n == nil {
		return diag.Pos{File: d.File}
	}
	if f, ok := d.nodeFiles[n]; ok {
		return diag.Pos{File: f, Line: n.Line, Column: n.Column}
	}
	return diag.Pos{File: d.File, Line: n.Line, Column: n.Column}
}

// Lookup returns the node at a field path such as spec.filters[1].exact, or
// the deepest node on the way when the path does not exist (the parent of a
// missing field), so that every error can point somewhere real. Once the
// document is compacted, the node is a copy.
func (d *Document) Lookup(path string) *yaml.Node {
	if d.tree != nil {
		return d.lookup(path).copy()
	}
	n := d.root
	for _, seg := range splitPath(path) {
		next := child(n, seg)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// lookup is Lookup in the compact form.
func (d *Document) lookup(path string) node {
	n := node{d.tree, 0}
	for _, seg := range splitPath(path) {
		next, ok := n.field(seg)
		if !ok {
			return n
		}
		n = next
	}
	return n
}

// KeyPos returns the position of the key of the last segment of path, and
// false when there is no such key.
func (d *Document) KeyPos(path string) (diag.Pos, bool) {
	segs := splitPath(path)
	if len(segs) == 0 {
		return diag.Pos{}, false
	}
	if d.tree != nil {
		parent := node{d.tree, 0}
		for _, seg := range segs[:len(segs)-1] {
			var ok bool
			if parent, ok = parent.field(seg); !ok {
				return diag.Pos{}, false
			}
		}
		k, ok := parent.key(segs[len(segs)-1])
		if !ok {
			return diag.Pos{}, false
		}
		return k.pos(d.File), true
	}
	parent := d.root
	for _, seg := range segs[:len(segs)-1] {
		if parent = child(parent, seg); parent == nil {
			return diag.Pos{}, false
		}
	}
	parent = resolve(parent)
	if parent == nil || parent.Kind != yaml.MappingNode {
		return diag.Pos{}, false
	}
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == segs[len(segs)-1] {
			return d.Pos(parent.Content[i]), true
		}
	}
	return diag.Pos{}, false
}

// PosOf returns the position of the value at path, or of its nearest
// parent; PosOf("") is the position of the object.
func (d *Document) PosOf(path string) diag.Pos {
	if d.tree != nil {
		return d.lookup(path).pos(d.File)
	}
	return d.Pos(d.Lookup(path))
}

// Labels returns the object's metadata.labels.
func (d *Document) Labels() map[string]string {
	if d.tree != nil {
		md, ok := node{d.tree, 0}.field("metadata")
		if !ok {
			return nil
		}
		labels, ok := md.field("labels")
		if !ok {
			return nil
		}
		if labels = labels.resolve(); labels.kind() != yaml.MappingNode {
			return nil
		}
		out := make(map[string]string, labels.len()/2)
		for j := 0; j+1 < labels.len(); j += 2 {
			out[labels.child(j).value()] = labels.child(j + 1).resolve().value()
		}
		return out
	}
	labels := resolve(child(child(d.root, "metadata"), "labels"))
	if labels == nil || labels.Kind != yaml.MappingNode {
		return nil
	}
	out := make(map[string]string, len(labels.Content)/2)
	for j := 0; j+1 < len(labels.Content); j += 2 {
		out[labels.Content[j].Value] = resolve(labels.Content[j+1]).Value
	}
	return out
}

func child(n *yaml.Node, seg string) *yaml.Node {
	n = resolve(n)
	if n == nil {
		return nil
	}
	switch n.Kind {
	case yaml.MappingNode:
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == seg {
				return n.Content[i+1]
			}
		}
	case yaml.SequenceNode:
		if i, err := strconv.Atoi(seg); err == nil && i >= 0 && i < len(n.Content) {
			return n.Content[i]
		}
	}
	return nil
}

func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// splitPath splits "spec.filters[1].exact" into spec, filters, 1, exact.
// Map keys with dots are written in brackets: metadata.annotations[a.b/c].
func splitPath(path string) []string {
	var segs []string
	for path != "" {
		switch {
		case path[0] == '.':
			path = path[1:]
		case path[0] == '[':
			end := strings.IndexByte(path, ']')
			if end < 0 {
				return append(segs, path[1:])
			}
			segs = append(segs, path[1:end])
			path = path[end+1:]
		default:
			end := strings.IndexAny(path, ".[")
			if end < 0 {
				return append(segs, path)
			}
			segs = append(segs, path[:end])
			path = path[end:]
		}
	}
	return segs
}

// JoinKey appends a map key to path, bracketed when it holds a dot or bracket.
func JoinKey(path, key string) string {
	if strings.ContainsAny(key, ".[]") || key == "" {
		return path + "[" + key + "]"
	}
	if path == "" {
		return key
	}
	return path + "." + key
}

// JoinIndex appends a list index to path.
func JoinIndex(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }
