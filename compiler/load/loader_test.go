package load

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type docSummary struct {
	File, Kind, Name string
	Index, Line      int
	NameLine         int
}

func loadString(t *testing.T, name, content string) ([]docSummary, []string) {
	t.Helper()
	dir := t.TempDir()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, diags, err := LoadFilesIn(dir, []string{p})
	if err != nil {
		t.Fatal(err)
	}
	var out []docSummary
	for _, d := range docs {
		out = append(out, docSummary{File: d.File, Kind: d.Kind, Name: d.Name, Index: d.Index, Line: d.Root.Line, NameLine: d.Lookup("metadata.name").Line})
	}
	var msgs []string
	for _, d := range diags {
		msgs = append(msgs, d.String())
	}
	return out, msgs
}

func TestStreamsKeepPositions(t *testing.T) {
	got, diags := loadString(t, "s.yaml", `# leading comment
---
kind: A
apiVersion: v1
metadata:
  name: a
--- # a comment on the marker
kind: B
apiVersion: v1
metadata: {name: b}
---
---
--- {kind: C, apiVersion: v1, metadata: {name: c}}
...
---
kind: List
apiVersion: v1
items:
- {kind: D, apiVersion: v1, metadata: {name: d}}
- kind: E
  apiVersion: v1
  metadata:
    name: e
---
text: |
  a block scalar
  --- is not a marker when indented
kind: F
apiVersion: v1
metadata: {name: f}
`)
	want := []docSummary{
		{File: "s.yaml", Kind: "A", Name: "a", Index: 0, Line: 3, NameLine: 6},
		{File: "s.yaml", Kind: "B", Name: "b", Index: 1, Line: 8, NameLine: 10},
		{File: "s.yaml", Kind: "C", Name: "c", Index: 2, Line: 13, NameLine: 13},
		{File: "s.yaml", Kind: "D", Name: "d", Index: 3, Line: 19, NameLine: 19},
		{File: "s.yaml", Kind: "E", Name: "e", Index: 4, Line: 20, NameLine: 23},
		{File: "s.yaml", Kind: "F", Name: "f", Index: 5, Line: 25, NameLine: 30},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("documents (-want +got):\n%s", d)
	}
	if len(diags) > 0 {
		t.Errorf("unexpected diagnostics: %v", diags)
	}
}

func TestParseErrorsPointIntoTheStream(t *testing.T) {
	_, diags := loadString(t, "s.yaml", "kind: A\napiVersion: v1\nmetadata: {name: a}\n---\nkind: B\nmetadata:\n  name: [b\n")
	want := []string{"s.yaml:7:1: invalid YAML: did not find expected ',' or ']'"}
	if d := cmp.Diff(want, diags); d != "" {
		t.Errorf("diagnostics (-want +got):\n%s", d)
	}
}

func TestCUEFiles(t *testing.T) {
	got, diags := loadString(t, "set.cue", `package x

broker: {
	apiVersion: "eventing.knative.dev/v1"
	kind:       "Broker"
	metadata: name: "default"
}
_hidden: {kind: "Nope"}
list: [{apiVersion: "v1", kind: "ConfigMap", metadata: name: "c"}]
`)
	if len(diags) > 0 {
		t.Fatalf("unexpected diagnostics: %v", diags)
	}
	if len(got) != 2 || got[0].Kind != "Broker" || got[0].NameLine != 6 {
		t.Errorf("documents = %+v, want the Broker with its name on line 6", got)
	}
	_, diags = loadString(t, "bad.cue", "kind: \"Broker\"\nx: 1 & 2\n")
	if want := []string{"bad.cue:2:8: x: conflicting values 2 and 1"}; !cmp.Equal(want, diags) {
		t.Errorf("diagnostics = %q, want %q", diags, want)
	}
}

func TestLookup(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "t.yaml")
	src := "apiVersion: v1\nkind: T\nmetadata:\n  name: t\n  annotations:\n    a.b/c: x\nspec:\n  list:\n  - one\n  - {two: 2}\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, _, err := LoadFiles([]string{p})
	if err != nil || len(docs) != 1 {
		t.Fatal(docs, err)
	}
	d := docs[0]
	for path, wantLine := range map[string]int{
		"metadata.annotations[a.b/c]": 6,
		"spec.list[1].two":            10,
		"spec.list[0]":                9,
		"spec.missing.deeper":         8, // the deepest node that exists: spec
		"spec.list[7]":                9, // the list itself
	} {
		if got := d.Lookup(path).Line; got != wantLine {
			t.Errorf("Lookup(%q) is on line %d, want %d", path, got, wantLine)
		}
	}
}
