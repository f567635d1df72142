package load

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
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
		out = append(out, docSummary{File: d.File, Kind: d.Kind, Name: d.Name, Index: d.Index, Line: d.PosOf("").Line, NameLine: d.Lookup("metadata.name").Line})
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

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

const brokerYAML = "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: default}\n"

// TestDiscoverPassesOverWhatIsNotAManifest walks a repository laid out as
// GitOps repositories are: tool configuration beside the manifests, a Helm
// chart, kustomizations.
func TestDiscoverPassesOverWhatIsNotAManifest(t *testing.T) {
	dir := writeTree(t, map[string]string{
		".pre-commit-config.yaml":      "repos: []\n",
		".github/workflows/ci.yaml":    "on: push\n",
		"renovate.json":                `{"extends": ["config:recommended"]}`,
		"mkdocs.yml":                   "site_name: x\n",
		"charts/app/Chart.yaml":        "apiVersion: v2\nname: app\nversion: 0.1.0\n",
		"charts/app/templates/cm.yaml": "{{ .Values.x }}\n",
		"apps/base/kustomization.yaml": "resources: [broker.yaml]\n",
		"apps/base/broker.yaml":        brokerYAML,
		"apps/prod/Kustomization":      "resources: [../base]\n",
		"clusters/prod/broker.yaml":    brokerYAML,
		"clusters/prod/.hidden.yaml":   brokerYAML,
		"docs/index.md":                "# docs\n",
	})
	in, err := Discover(Options{Paths: []string{dir}})
	if err != nil {
		t.Fatal(err)
	}
	rel := func(p string) string { r, _ := filepath.Rel(dir, p); return filepath.ToSlash(r) }
	var files, kusts, skipped []string
	for _, f := range in.Files {
		files = append(files, rel(f))
	}
	for _, k := range in.Kustomizations {
		kusts = append(kusts, rel(k))
	}
	for _, s := range in.Skipped {
		skipped = append(skipped, rel(s.Path))
	}
	want := []string{"apps/base/broker.yaml", "clusters/prod/broker.yaml", "mkdocs.yml", "renovate.json"}
	if diff := cmp.Diff(want, files); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"apps/base", "apps/prod"}, kusts); diff != "" {
		t.Errorf("kustomizations (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{".pre-commit-config.yaml", "charts/app", "clusters/prod/.hidden.yaml"}, skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}

	// What is left that is not a Kubernetes object is skipped when read.
	l, err := ReadFiles(inputfs.Disk, dir, in.Files, cuelimit.Default, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(l.Diags) > 0 {
		t.Errorf("diagnostics: %v", l.Diags)
	}
	var read []string
	for _, s := range l.Skipped {
		read = append(read, s.Path)
	}
	if diff := cmp.Diff([]string{"mkdocs.yml", "renovate.json"}, read); diff != "" {
		t.Errorf("skipped when read (-want +got):\n%s", diff)
	}
	if len(l.Docs) != 2 {
		t.Errorf("read %d objects, want the 2 Brokers", len(l.Docs))
	}
}

// TestNonObjectsBesideObjects keeps the error for a document with no
// apiVersion and kind when its file also holds objects, and for an object
// that has only one of the two.
func TestNonObjectsBesideObjects(t *testing.T) {
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"mixed.yaml", brokerYAML + "---\nfoo: bar\n", []string{"mixed.yaml:5:1: not a Kubernetes object: apiVersion and kind are required"}},
		{"half.yaml", "kind: Broker\nmetadata: {name: a}\n", []string{"half.yaml:1:1: not a Kubernetes object: apiVersion and kind are required"}},
		{"list.yaml", "- a\n- b\n", nil},
		{"config.yaml", "site_name: x\n---\nnav: []\n", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadString(t, tc.name, tc.content)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestYAMLReadingRules covers the paths the reader takes for speed: a
// document without aliases is walked as a tree, small mappings find
// duplicate keys without a map, large ones with one.
func TestYAMLReadingRules(t *testing.T) {
	var wide strings.Builder
	for i := range 2*linearKeys + 3 {
		fmt.Fprintf(&wide, "  k%d: v\n", i)
	}
	for _, tc := range []struct {
		name, content string
		want          []string
	}{
		{"small-duplicate", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  a: x\n  b: y\n  a: z\n  a: w\n", []string{
			"small-duplicate.yaml:7:3: duplicate key \"a\": it is first given at line 5; give each key once",
			"small-duplicate.yaml:8:3: duplicate key \"a\": it is first given at line 5; give each key once",
		}},
		{"wide-duplicate", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n" + wide.String() + "  k3: again\n", []string{
			fmt.Sprintf("wide-duplicate.yaml:%d:3: duplicate key \"k3\": it is first given at line 8; give each key once", 5+2*linearKeys+3),
		}},
		{"wide-no-duplicate", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n" + wide.String(), nil},
		// A quoted "<<" is a key like any other, and is no duplicate of
		// a merge key.
		{"quoted-merge-key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  <<: {m: x}\n  \"<<\": y\n", nil},
		{"quoted-merge-key-twice", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  \"<<\": x\n  <<: {m: x}\n  \"<<\": y\n", []string{
			"quoted-merge-key-twice.yaml:7:3: duplicate key \"<<\": it is first given at line 5; give each key once",
		}},
		{"non-scalar-key", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\ndata:\n  ? [a]\n  : x\n", []string{
			"non-scalar-key.yaml:5:5: a key must be a string, not a list",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := loadString(t, tc.name+".yaml", tc.content)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("diagnostics (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAliasesKeepPositions reads anchors, aliases and merge keys in the
// second document of a stream: every node is moved down by the lines
// before it once, whether it is reached through an alias or not.
func TestAliasesKeepPositions(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.yaml")
	src := "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: a}\n---\n" +
		"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n  labels: &common\n    team: shop\n    tier: backend\n" +
		"  annotations: *common\ndata:\n  <<: *common\n  tier: frontend\n"
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, diags, err := LoadFiles([]string{p})
	if err != nil || len(diags) > 0 || len(docs) != 2 {
		t.Fatal(docs, diags, err)
	}
	d := docs[1]
	for path, wantLine := range map[string]int{
		"metadata.name":             8,
		"metadata.labels.team":      10,
		"metadata.annotations.tier": 11,
		"data.team":                 10,
		"data.tier":                 15,
	} {
		if got := d.Lookup(path).Line; got != wantLine {
			t.Errorf("Lookup(%q) is on line %d, want %d", path, got, wantLine)
		}
	}
}

// A CUE manifest that runs too long is stopped with an error that names
// it. The comprehension here ends by itself in some hundreds of
// milliseconds, so that the evaluation left running does not outlive the
// test by much.
func TestCUEManifestOverItsLimitsIsStopped(t *testing.T) {
	slow := "import \"list\"\n\nitems: [for i in list.Range(0, 20000, 1) {i}]\n"
	_, err := Read([]Source{{Name: "slow.cue", Data: []byte(slow)}}, cuelimit.Limits{Timeout: 10 * time.Millisecond}, nil)
	var ex *cuelimit.Exceeded
	if !errors.As(err, &ex) {
		t.Fatalf("Read = %v; want *cuelimit.Exceeded", err)
	}
	want := "evaluation of CUE manifest slow.cue stopped after 10ms, its time limit: make the file cheaper"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error:\n got %s\nwant it to start with %s", err, want)
	}
}

func TestCUEManifestWithinItsLimitsIsRead(t *testing.T) {
	src := "apiVersion: \"v1\"\nkind: \"ConfigMap\"\nmetadata: name: \"c\"\n"
	l, err := Read([]Source{{Name: "c.cue", Data: []byte(src)}}, cuelimit.Limits{Timeout: time.Minute, Memory: 256 << 20}, nil)
	if err != nil || len(l.Docs) != 1 || l.Docs[0].Name != "c" {
		t.Fatalf("Read = %+v, %v; want the ConfigMap c", l, err)
	}
}
