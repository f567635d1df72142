package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"go.yaml.in/yaml/v3"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	sigsyaml "sigs.k8s.io/yaml"
)

// The readers knc's output meets on its way to a cluster: YAML 1.2 (yaml
// v3, what kyaml builds on), YAML 1.1 (sigs.k8s.io/yaml, through which
// kubectl, Flux and Argo CD read manifests) and a kustomize build, which
// parses and writes every file again. Each must read back the string knc
// wrote, or the cluster gets a different value from the one in Git.

// readYAMLv3 decodes doc with yaml v3.
func readYAMLv3(doc []byte) (any, error) {
	var v any
	err := yaml.Unmarshal(doc, &v)
	return v, err
}

// readSigsYAML decodes doc as YAML 1.1 through sigs.k8s.io/yaml, which
// turns it into JSON first.
func readSigsYAML(doc []byte) (any, error) {
	j, err := sigsyaml.YAMLToJSON(doc)
	if err != nil {
		return nil, err
	}
	var v any
	err = json.Unmarshal(j, &v)
	return v, err
}

// readAfterKustomize runs a kustomize build over doc, a ConfigMap, in an
// in-memory file system and decodes its output as sigs.k8s.io/yaml does.
func readAfterKustomize(doc []byte) (any, error) {
	fs := filesys.MakeFsInMemory()
	if err := fs.WriteFile("/k/kustomization.yaml", []byte("resources:\n- cm.yaml\n")); err != nil {
		return nil, err
	}
	if err := fs.WriteFile("/k/cm.yaml", doc); err != nil {
		return nil, err
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(fs, "/k")
	if err != nil {
		return nil, err
	}
	out, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return readSigsYAML(out)
}

// stringDocument is a ConfigMap holding s as a key, a value, an
// annotation and a list item.
func stringDocument(s string) map[string]any {
	return map[string]any{
		"apiVersion": "v1",
		"kind":       "ConfigMap",
		"metadata": map[string]any{
			"name":        "strings",
			"annotations": map[string]any{"value": s},
		},
		"data": map[string]any{"value": s, "key:" + s: "k", "list": []any{s}},
	}
}

// decodedStrings returns what a reader found where stringDocument put s.
func decodedStrings(v any) (map[string]any, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("decoded %T, not a mapping", v)
	}
	md, _ := m["metadata"].(map[string]any)
	ann, _ := md["annotations"].(map[string]any)
	data, _ := m["data"].(map[string]any)
	return map[string]any{"annotation": ann["value"], "data": data}, nil
}

func checkStringSurvives(t *testing.T, s string) {
	t.Helper()
	doc := stringDocument(s)
	var buf bytes.Buffer
	if err := encodeYAML(&buf, doc); err != nil {
		t.Fatal(err)
	}
	want, _ := decodedStrings(doc)
	readers := []struct {
		name string
		read func([]byte) (any, error)
	}{
		{"yaml v3", readYAMLv3},
		{"sigs.k8s.io/yaml", readSigsYAML},
		{"kustomize build", readAfterKustomize},
	}
	for _, r := range readers {
		v, err := r.read(buf.Bytes())
		if err != nil && r.name == "kustomize build" && !kustomizeCarries(doc) {
			// kustomize refuses some characters (DEL, NEL) however they
			// are written: a limit of kustomize, not of knc's encoding.
			continue
		}
		if err != nil {
			t.Errorf("%s cannot read the encoding of %q: %v\n%s", r.name, s, err, buf.String())
			continue
		}
		got, err := decodedStrings(v)
		if err != nil {
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		// json.Number and the list come back as []any of strings: the
		// document holds only strings.
		want["data"] = normaliseLists(want["data"])
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s reads the encoding of %q as another value (-want +got):\n%s\n%s", r.name, s, diff, buf.String())
		}
	}
}

// kustomizeCarries reports whether a kustomize build reads doc as yaml v3's
// own encoder writes it: the reference for what kustomize can carry at all.
func kustomizeCarries(doc map[string]any) bool {
	ref, err := yaml.Marshal(doc)
	if err != nil {
		return false
	}
	_, err = readAfterKustomize(ref)
	return err == nil
}

func normaliseLists(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// differentialStrings are strings some YAML reader resolves to another type
// or value, or that need quoting or escaping to be read at all: YAML 1.1
// booleans and timestamps (including the ones with a space or a lower-case
// t as separator), YAML 1.1 and 1.2 numbers, merge keys, the value key,
// indicators, blanks at either end and characters outside ASCII.
var differentialStrings = []string{
	"y", "Y", "n", "N", "yes", "Yes", "YES", "no", "NO", "on", "On", "ON", "off", "Off", "true", "TRUE", "False",
	"2024-05-06 07:08:09", "2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5",
	"2002-12-14", "2001-12-15 2:59:43.10", "1999-1-1",
	"0x1F", "0X1f", "0o17", "0b1010", "+0b1010", "017", "1e3", "1E3", "1.5e+3", "6.8523015e+5", "685.230_15e+03",
	"685_230.15", "190:20:30.15", "190:20:30", "-0x1", "+12", "-12", "1_000", "0.", ".5", "-.5", "+.5", "1.",
	".inf", ".Inf", ".INF", "-.inf", "+.inf", ".nan", ".NaN", ".NAN", "~", "null", "Null", "NULL",
	"<<", "=", "!", "&", "*", "|", ">", "%", "@", "`", "?", "? x", "- x", ": x", "#", "'", "\"", "[", "]", "{", "}", ",",
	" leading", "trailing ", " both ", "\tleading tab", "trailing tab\t", " ", "  ", "",
	"é", "naïve", "日本語", "emoji 🎉", "\u00a0nbsp", "zero\u200bwidth", "bom\ufeff", "nel\u0085line", "ls\u2028ps\u2029",
	"ctl\x00", "bell\x07", "del\x7f", "line\nbreak", "trailing newline\n", "\n", "\r\n", "cr\rcr",
	"..", "...", "---", "--- x", "... x", "a:b", "a: b", "a #b", "a#b", "http://x/y#z", "k=v", "a,b", "-", "-a", "-1a",
	"0", "00", "1", "-0", "+0", "0.0", "1:2", "12:30:45", "v1.2.3", "sha256:0123", "1.0.0", "3f2a9c", "1e", "1e+",
	"Infinity", "NaN", "nan", "inf",
}

func TestEncodedStringsSurviveEveryReader(t *testing.T) {
	for _, s := range differentialStrings {
		checkStringSurvives(t, s)
	}
}

// FuzzEncodedStringsSurviveEveryReader searches for a string that one of
// the readers above reads differently from what knc encoded. Its seeds and
// testdata/fuzz run in every `go test`; `make fuzz` searches further.
func FuzzEncodedStringsSurviveEveryReader(f *testing.F) {
	for _, s := range differentialStrings {
		f.Add(s)
	}
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			return // manifests are UTF-8; JSON and YAML cannot carry anything else
		}
		checkStringSurvives(t, s)
	})
}
