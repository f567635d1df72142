package load

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
)

// treeCases are documents as the loader reads them: styles, tags, aliases,
// merge keys, flow and block collections, nesting.
var treeCases = map[string]string{
	"block": `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  labels: {app: a, tier: "web"}
data:
  plain: text
  single: 'quoted'
  double: "quoted\ttoo"
  literal: |
    two
    lines
  folded: >
    folded
    text
  number: "1"
list:
  - 1
  - 1.5
  - true
  - null
  - [a, {b: c}]
  - {}
  - []
`,
	"aliases and merge keys": `apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  labels: &labels
    app: a
base: &base {x: 1, y: 2}
data:
  <<: *base
  y: 3
  labels: *labels
  again: *labels
`,
	"explicit tags": `apiVersion: v1
kind: ConfigMap
metadata: !!map
  name: !!str c
data: !!map
  n: !!int "7"
  s: !!str 7
`,
}

// sameNodes compares what the compact form keeps of a node: everything
// but comments and anchor names.
func sameNodes(t *testing.T, path string, want, got *yaml.Node, seen map[*yaml.Node]bool) {
	t.Helper()
	if seen[want] {
		return
	}
	seen[want] = true
	strip := func(n *yaml.Node) yaml.Node {
		return yaml.Node{Kind: n.Kind, Style: n.Style, Tag: n.Tag, Value: n.Value, Line: n.Line, Column: n.Column}
	}
	if diff := cmp.Diff(strip(want), strip(got)); diff != "" {
		t.Errorf("node at %s (-want +got):\n%s", path, diff)
		return
	}
	if (want.Alias == nil) != (got.Alias == nil) {
		t.Errorf("node at %s: alias %v, want %v", path, got.Alias != nil, want.Alias != nil)
		return
	}
	if want.Alias != nil {
		sameNodes(t, path+"*", want.Alias, got.Alias, seen)
	}
	if len(want.Content) != len(got.Content) {
		t.Errorf("node at %s: %d nodes below, want %d", path, len(got.Content), len(want.Content))
		return
	}
	for i := range want.Content {
		sameNodes(t, fmt.Sprintf("%s/%d", path, i), want.Content[i], got.Content[i], seen)
	}
}

// parsed returns the documents of text as the loader reads them, before
// Compact.
func parsed(t *testing.T, text string) []*Document {
	t.Helper()
	c := &chunk{file: "f.yaml", text: []byte(text)}
	var root yaml.Node
	if err := yaml.Unmarshal(c.text, &root); err != nil {
		t.Fatal(err)
	}
	if !c.normalise(&Document{File: c.file}, root.Content[0]) {
		t.Fatalf("not read: %v", c.diags)
	}
	n := root.Content[0]
	doc := &Document{File: c.file, root: n, APIVersion: scalar(n, "apiVersion"), Kind: scalar(n, "kind")}
	return []*Document{doc}
}

func TestCompactKeepsNodesAndPositions(t *testing.T) {
	for name, text := range treeCases {
		t.Run(name, func(t *testing.T) {
			live := parsed(t, text)[0]
			compacted := parsed(t, text)[0]
			compacted.Compact()
			if compacted.root != nil || compacted.tree == nil {
				t.Fatal("Compact left the parsed nodes")
			}
			sameNodes(t, "", live.Node(), compacted.Node(), map[*yaml.Node]bool{})

			// Every path, to every node, gives the same position, as a
			// value and as a key; so do paths that do not exist.
			var paths []string
			var walk func(n *yaml.Node, path string, depth int)
			walk = func(n *yaml.Node, path string, depth int) {
				paths = append(paths, path, JoinKey(path, "missing"))
				n = resolve(n)
				if depth > 8 {
					return
				}
				switch n.Kind {
				case yaml.MappingNode:
					for i := 0; i+1 < len(n.Content); i += 2 {
						walk(n.Content[i+1], JoinKey(path, n.Content[i].Value), depth+1)
					}
				case yaml.SequenceNode:
					for i, c := range n.Content {
						walk(c, JoinIndex(path, i), depth+1)
					}
				}
			}
			walk(live.Node(), "", 0)
			for _, p := range paths {
				if diff := cmp.Diff(live.PosOf(p), compacted.PosOf(p)); diff != "" {
					t.Errorf("PosOf(%q) (-parsed +compact):\n%s", p, diff)
				}
				wantKey, wantOK := live.KeyPos(p)
				gotKey, gotOK := compacted.KeyPos(p)
				if diff := cmp.Diff(wantKey, gotKey); diff != "" || wantOK != gotOK {
					t.Errorf("KeyPos(%q) = %v, %v; want %v, %v", p, gotKey, gotOK, wantKey, wantOK)
				}
				if got, want := compacted.Lookup(p).Line, live.Lookup(p).Line; got != want {
					t.Errorf("Lookup(%q).Line = %d, want %d", p, got, want)
				}
			}

			wantGeneric, wantErr := Generic(live.Node())
			gotGeneric, gotErr := compacted.Generic()
			if diff := cmp.Diff(wantGeneric, gotGeneric); diff != "" || (wantErr == nil) != (gotErr == nil) {
				t.Errorf("Generic (-parsed +compact), errors %v and %v:\n%s", wantErr, gotErr, diff)
			}
			valueGeneric, err := compacted.Value().Generic()
			if diff := cmp.Diff(wantGeneric, valueGeneric); diff != "" || err != nil {
				t.Errorf("Value().Generic (-parsed +compact), error %v:\n%s", err, diff)
			}
			if diff := cmp.Diff(live.Labels(), compacted.Labels()); diff != "" {
				t.Errorf("Labels (-parsed +compact):\n%s", diff)
			}
		})
	}
}

func TestCompactKeepsTheFilesOfPatchedNodes(t *testing.T) {
	doc := parsed(t, treeCases["block"])[0]
	patched := doc.Lookup("data.plain")
	doc.SetNodeFile(patched, "patch.yaml")
	doc.SetNodeFile(doc.Lookup("metadata.labels"), "other.yaml")
	want := map[string]diag.Pos{}
	for _, p := range []string{"", "data.plain", "metadata.labels", "metadata.labels.app", "data.single"} {
		want[p] = doc.PosOf(p)
	}
	doc.Compact()
	for p, w := range want {
		if diff := cmp.Diff(w, doc.PosOf(p)); diff != "" {
			t.Errorf("PosOf(%q) (-before +after Compact):\n%s", p, diff)
		}
	}
	// Decode reports at the patch's file too.
	var out struct {
		Data map[string]int `json:"data"`
	}
	var msgs []string
	for _, d := range Decode(doc, &out) {
		if d.Path == "data.plain" {
			msgs = append(msgs, d.Pos.String())
		}
	}
	if diff := cmp.Diff([]string{want["data.plain"].String()}, msgs); diff != "" {
		t.Errorf("Decode positions at data.plain (-want +got):\n%s", diff)
	}
	if !strings.HasPrefix(want["data.plain"].String(), "patch.yaml:") {
		t.Errorf("the patched node is at %s, want it in patch.yaml", want["data.plain"])
	}
}
