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
	// Root is the object's mapping node; every node keeps its line and column.
	Root *yaml.Node

	APIVersion string
	Kind       string
	Name       string
	Namespace  string

	// nodeFiles names the file of nodes that come from another file than
	// File: a rendered object's fields that a kustomize patch set.
	nodeFiles map[*yaml.Node]string
}

// NewDocument returns the document of an object whose root is n, read from
// file.
func NewDocument(file string, n *yaml.Node) *Document {
	doc := &Document{File: file, Root: n, APIVersion: scalar(n, "apiVersion"), Kind: scalar(n, "kind")}
	if md := child(n, "metadata"); md != nil {
		doc.Name = scalar(md, "name")
		doc.Namespace = scalar(md, "namespace")
	}
	return doc
}

// SetNodeFile says that n, whose Line and Column are set, lies in file
// rather than in the document's File.
func (d *Document) SetNodeFile(n *yaml.Node, file string) {
	if d.nodeFiles == nil {
		d.nodeFiles = map[*yaml.Node]string{}
	}
	d.nodeFiles[n] = file
}

// Pos returns the position of n in the document's file.
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
// missing field), so that every error can point somewhere real.
func (d *Document) Lookup(path string) *yaml.Node {
	n := d.Root
	for _, seg := range splitPath(path) {
		next := child(n, seg)
		if next == nil {
			return n
		}
		n = next
	}
	return n
}

// KeyNode returns the key node of the last segment of path, or nil.
func (d *Document) KeyNode(path string) *yaml.Node {
	segs := splitPath(path)
	if len(segs) == 0 {
		return nil
	}
	parent := d.Root
	for _, seg := range segs[:len(segs)-1] {
		if parent = child(parent, seg); parent == nil {
			return nil
		}
	}
	parent = resolve(parent)
	if parent == nil || parent.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(parent.Content); i += 2 {
		if parent.Content[i].Value == segs[len(segs)-1] {
			return parent.Content[i]
		}
	}
	return nil
}

// PosOf returns the position of the value at path, or of its nearest parent.
func (d *Document) PosOf(path string) diag.Pos { return d.Pos(d.Lookup(path)) }

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
