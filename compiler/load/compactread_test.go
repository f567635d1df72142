package load

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/rogpeppe/go-internal/txtar"
	"go.yaml.in/yaml/v3"
)

// flatNode is a node of a compact tree as the differential tests compare
// it: everything a later stage reads.
type flatNode struct {
	Path         string
	Kind         yaml.Kind
	Tag          string
	Style        yaml.Style
	Value        string
	Line, Column int
	File         uint16
}

func flatten(n node, path string, out []flatNode) []flatNode {
	n = n.resolve()
	c := n.c()
	out = append(out, flatNode{
		Path: path, Kind: n.kind(), Tag: n.tag(), Style: yaml.Style(c.style), Value: n.value(),
		Line: int(c.line), Column: int(c.column), File: c.file,
	})
	for j := range n.len() {
		out = flatten(n.child(j), JoinIndex(path, j), out)
	}
	return out
}

// agreesWithYAMLv3 reads a chunk with the compact reader and, when it
// reads it, with yaml.v3, and fails t unless both give the same document.
// It reports whether the compact reader read the chunk.
func agreesWithYAMLv3(t *testing.T, text []byte, offset int) bool {
	t.Helper()
	treeAgreesWithYAMLv3(t, text, offset)
	fast := &chunk{file: "in.yaml", text: text, offset: offset}
	if !fast.readCompact() {
		return false
	}
	slow := &chunk{file: "in.yaml", text: text, offset: offset}
	slow.parseYAMLv3()
	if len(slow.diags) > 0 || len(slow.foreign) > 0 {
		t.Fatalf("the compact reader read what yaml.v3's reading refuses: %v%v\n%q", slow.diags, slow.foreign, text)
	}
	if len(fast.docs) != 1 || len(slow.docs) != 1 {
		t.Fatalf("compact reader: %d documents, yaml.v3: %d, want 1 each\n%q", len(fast.docs), len(slow.docs), text)
	}
	f, s := fast.docs[0], slow.docs[0]
	header := func(d *Document) []string { return []string{d.File, d.APIVersion, d.Kind, d.Name, d.Namespace} }
	if diff := cmp.Diff(header(s), header(f)); diff != "" {
		t.Fatalf("document header (-yaml.v3 +compact reader):\n%s\n%q", diff, text)
	}
	if s.tree == nil {
		t.Fatalf("yaml.v3's document was not compacted\n%q", text)
	}
	if diff := cmp.Diff(flatten(node{s.tree, 0}, "", nil), flatten(node{f.tree, 0}, "", nil)); diff != "" {
		t.Fatalf("nodes (-yaml.v3 +compact reader):\n%s\n%q", diff, text)
	}
	return true
}

// treeAgreesWithYAMLv3 compares the compact reader's tree with yaml.v3's
// for any mapping, object or not.
func treeAgreesWithYAMLv3(t *testing.T, text []byte, offset int) {
	t.Helper()
	fast := readCompact(text, offset)
	if fast == nil {
		return
	}
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		t.Fatalf("the compact reader read what yaml.v3 refuses: %v\n%q", err, text)
	}
	if root.Kind != yaml.DocumentNode || len(root.Content) != 1 {
		t.Fatalf("yaml.v3 read no document\n%q", text)
	}
	shift(&root, offset)
	c := &chunk{file: "in.yaml"}
	if !c.normalise(&Document{File: c.file}, root.Content[0]) {
		t.Fatalf("the compact reader read what the loader refuses: %v\n%q", c.diags, text)
	}
	slow := compact(root.Content[0], nil)
	if diff := cmp.Diff(flatten(node{slow, 0}, "", nil), flatten(node{fast, 0}, "", nil)); diff != "" {
		t.Fatalf("nodes (-yaml.v3 +compact reader):\n%s\n%q", diff, text)
	}
}

const widget = "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\n"

func TestCompactReaderAgreesWithYAMLv3(t *testing.T) {
	for _, c := range []struct {
		name string
		text string
		// read: the compact reader reads it rather than leave it to
		// yaml.v3.
		read bool
	}{
		{"flow list of numbers", widget + "spec:\n  items: [1,1,1,1]\n", true},
		{"block list", widget + "spec:\n  items:\n  - 1\n  - two\n  -   'three'\n", true},
		{"block list indented", widget + "spec:\n  items:\n    - 1\n    - 2 # two\n", true},
		{"block mapping of scalars", widget + "spec:\n  items:\n    k0: 1\n    k1: true\n    k2: null\n    k3: ~\n    k4: 1.5\n    k5: \"x y\"\n", true},
		{"flow mapping", widget + "spec: {a: 1, b: [x, 'y', \"z\"], c: {}, d: []}\n", true},
		{"json", `{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a":"1","b" : "2"}}`, true},
		{"json over lines", "{\n  \"apiVersion\": \"v1\",\n  \"kind\": \"ConfigMap\",\n  \"data\": {\n    \"a\": \"1\"\n  }\n}\n", true},
		{"compact mappings in a list", widget + "spec:\n  containers:\n  - name: a\n    image: b\n    ports:\n    - containerPort: 80\n  -   name: c\n      args: [\"--x\", -1]\n", true},
		{"entry on its own line", widget + "spec:\n  l:\n  -\n    a: 1\n  - b\n", true},
		{"comments and blank lines", "# head\n\n" + widget + "  # inside\nspec:   # after\n\n  a: b   # c\n  # foot\n", true},
		{"flow over lines with comments", widget + "spec:\n  a: [1, # one\n    2,\n\n    3]\n  b: x\n", true},
		{"single quotes", widget + "spec:\n  a: 'it''s'\n  'b c': ''\n", true},
		{"plain scalars with indicators inside", widget + "spec:\n  a: b:c\n  url: http://x/y?z=1#f\n  c: a-b [x] {y}, z\n  d: -x\n  e: 'q' # c\n", true},
		{"resolved tags", widget + "spec:\n  a: 0x1F\n  b: 2001-12-14\n  c: .inf5\n  d: True\n  e: 010\n  f: 1_000\n  g: -.5\n", true},
		{"non-ASCII", widget + "spec:\n  é: \"ü\"\n  x: [ä, ö]\n", true},
		{"lines shifted", widget + "spec: {}\n", true},
		{"long plain value", widget + "spec:\n  a: " + strings.Repeat("x", 5000) + "\n", true},
		{"key too long", widget + "spec:\n  " + strings.Repeat("x", 1100) + ": 1\n", false},
		{"quoted key too long", widget + "spec:\n  '" + strings.Repeat("''", 600) + "': 1\n", false},

		{"anchor and alias", widget + "spec:\n  a: &x 1\n  b: *x\n", false},
		{"merge key", widget + "spec:\n  a: {x: 1}\n  b:\n    <<: {y: 2}\n", false},
		{"tag", widget + "spec:\n  a: !!str 1\n", false},
		{"literal block", widget + "spec:\n  a: |\n    x\n", false},
		{"multi-line plain", widget + "spec:\n  a: x\n    y\n", false},
		{"multi-line plain in flow", widget + "spec:\n  a: [x\n    y]\n", false},
		{"empty value", widget + "spec:\n  a:\n  b: 1\n", false},
		{"duplicate key", widget + "spec:\n  a: 1\n  a: 2\n", false},
		{"number out of range", widget + "spec:\n  a: 0xFFFFFFFFFFFFFFFF\n", false},
		{"number beyond float range is a string", widget + "spec:\n  a: 1e400\n", true},
		{"tab", widget + "spec:\n  a:\t1\n", false},
		{"escape", widget + "spec:\n  a: \"x\\ny\"\n", false},
		{"trailing comma", widget + "spec:\n  a: [1,]\n", false},
		{"bad indentation", widget + "spec:\n  a: 1\n   b: 2\n", false},
		{"a list, not an object", "- 1\n- 2\n", false},
		{"no kind", "apiVersion: v1\nmetadata: {}\n", false},
		{"v1 List", "apiVersion: v1\nkind: List\nitems: []\n", false},
		{"carriage returns", "apiVersion: v1\r\nkind: ConfigMap\r\n", false},
		{"unclosed flow", widget + "spec: [1, 2\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, offset := range []int{0, 7} {
				if read := agreesWithYAMLv3(t, []byte(c.text), offset); read != c.read {
					t.Errorf("compact reader read it: %t, want %t", read, c.read)
				}
			}
		})
	}
}

// FuzzCompactReaderAgreesWithYAMLv3 holds the compact reader to yaml.v3:
// whatever document it reads, yaml.v3's reading accepts too, with the
// same values, tags, styles, lines and columns. It is seeded with every
// YAML and JSON file under the repository's testdata, and every one in
// its testscript archives.
func FuzzCompactReaderAgreesWithYAMLv3(f *testing.F) {
	f.Add(widget + "spec:\n  items: [1,1,1]\n")
	f.Add(widget + "spec:\n  l:\n  - a: 1\n    b: [x, {y: 'z'}]\n  - 2\n")
	f.Add(`{"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}}`)
	f.Add("a: [1, {b: 'c'}]\nd:\n- e: f\n  g:\n  - 1\n")
	for _, file := range testdataManifests(f) {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		if filepath.Ext(file) != ".txtar" {
			f.Add(string(data))
			continue
		}
		for _, member := range txtar.Parse(data).Files {
			switch filepath.Ext(member.Name) {
			case ".yaml", ".yml", ".json":
				f.Add(string(member.Data))
			}
		}
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, c := range splitStream([]byte(text)) {
			agreesWithYAMLv3(t, c.text, c.offset)
		}
	})
}

// testdataManifests lists the YAML, JSON and txtar files of the module's
// testdata directories, up to 64 KiB each.
func testdataManifests(tb testing.TB) []string {
	tb.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		tb.Fatalf("module root not found above the package: %v", err)
	}
	var files []string
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml", ".json", ".txtar":
		default:
			return nil
		}
		if !strings.Contains(filepath.ToSlash(p), "/testdata/") {
			return nil
		}
		if info, err := d.Info(); err != nil || info.Size() > 64<<10 {
			return err
		}
		files = append(files, p)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	return files
}
