package kustomize

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
)

// TestRewriteAnnotationsMatchesKyaml rewrites the annotations of objects
// with knc's rewrite and with kyaml's SetAnnotations(GetAnnotations()),
// which krusty runs, and compares every node.
func TestRewriteAnnotationsMatchesKyaml(t *testing.T) {
	objects := []string{
		"metadata:\n  name: a\n",
		"metadata:\n  name: a\n  annotations: {}\n  labels: {x: y}\n",
		"metadata:\n  annotations: {z: \"1\", a: yes, m: '', n: null, o: ~} # flow\n  name: a\n",
		"metadata:\n  name: a\n  annotations:\n    # head\n    lit: |\n      two\n      lines\n    folded: >\n      one\n    quoted: \"a\\nb\"\n    word: \"1.0\"\n    plain: text # line\n",
		"metadata:\n  name: a\n  annotations: x\n",
		"metadata:\n  name: a\n  annotations: [a, b]\n",
		"metadata:\n  name: a\n  annotations: {a: {b: c}, d: [e]}\n",
		"metadata:\n  name: a\n  annotations: {a: b, a: c}\n",
		"metadata: {name: a, annotations: {b: 'on', a: \"off\"}}\n",
		"metadata:\n  name: a\n  annotations: {a: b}\n  annotations: {c: d}\n",
		"metadata: ~\n",
		"kind: X\n",
	}
	nonString := map[string]bool{}
	for _, text := range objects {
		var mine, theirs yaml.Node
		if err := yaml.Unmarshal([]byte(text), &mine); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if err := yaml.Unmarshal([]byte(text), &theirs); err != nil {
			t.Fatal(err)
		}
		errMine := rewriteAnnotations(mine.Content[0], nonString)
		errTheirs := kyamlRewriteAnnotations(theirs.Content[0])
		if (errMine == nil) != (errTheirs == nil) {
			t.Errorf("%q: error %v, kyaml's %v", text, errMine, errTheirs)
		}
		if diff := cmp.Diff(nodeDump(theirs.Content[0]), nodeDump(mine.Content[0])); diff != "" {
			t.Errorf("%q: knc's rewrite differs from kyaml's (-kyaml +knc):\n%s", text, diff)
		}
	}
}

func nodeDump(n *yaml.Node) string {
	var b strings.Builder
	var walk func(n *yaml.Node, depth int)
	walk = func(n *yaml.Node, depth int) {
		fmt.Fprintf(&b, "%s%d %s style=%d %q head=%q line=%q foot=%q at %d:%d\n",
			strings.Repeat(" ", depth), n.Kind, n.Tag, n.Style, n.Value, n.HeadComment, n.LineComment, n.FootComment, n.Line, n.Column)
		for _, c := range n.Content {
			walk(c, depth+1)
		}
	}
	walk(n, 0)
	return b.String()
}
