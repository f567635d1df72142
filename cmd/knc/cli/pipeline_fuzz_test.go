package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/internal/admissionfuzz"
)

// FuzzValidateAndBuild runs knc validate and knc build, in process and
// through the command boundary, on objects of every kind with any JSON
// value at any path: the input picks a generated case (seed, index), the
// place (selector) and the value (value, read as JSON, else taken as a
// string), and how the files are laid out (a file, a multi-document
// stream with a second case, or a kustomization), and whether the case
// is one of the core kinds or of the sources and flows. Each command must end
// with exit 0, 1 or 2 and say why when it is not 0; a panic, which the
// command boundary turns into "internal error", fails the target.
func FuzzValidateAndBuild(f *testing.F) {
	f.Add(uint64(1), uint16(0), uint(3), []byte(`[]`), uint8(0))
	f.Add(uint64(1), uint16(1), uint(9), []byte(`{"a": [1, {"b": null}]}`), uint8(1))
	f.Add(uint64(2), uint16(5), uint(17), []byte(`1e400`), uint8(2))
	f.Add(uint64(3), uint16(7), uint(1), []byte(`"on"`), uint8(0))
	f.Add(uint64(4), uint16(2), uint(0), []byte(`-9223372036854775809`), uint8(2))
	f.Add(uint64(5), uint16(11), uint(40), []byte(`{"spec": []}`), uint8(1))
	// Layouts 3 to 5 draw from the sources and flows.
	f.Add(uint64(6), uint16(3), uint(12), []byte(`{"ref": "x"}`), uint8(3))
	f.Add(uint64(7), uint16(8), uint(30), []byte(`[null]`), uint8(4))
	f.Fuzz(func(t *testing.T, seed uint64, index uint16, selector uint, value []byte, layout uint8) {
		g := admissionfuzz.NewGenerator(seed)
		if layout/3%2 == 1 {
			g = admissionfuzz.NewSourceGenerator(seed)
		}
		c := g.Case(int(index))
		// The case is written out by a YAML encoder, which cannot write
		// text that is not UTF-8; FuzzLoad feeds such bytes to knc.
		value = []byte(strings.ToValidUTF8(string(value), "\uFFFD"))
		var v yaml.Node
		if err := yaml.Unmarshal(value, &v); err != nil || len(v.Content) == 0 {
			v = yaml.Node{Kind: yaml.DocumentNode, Content: []*yaml.Node{{Kind: yaml.ScalarNode, Tag: "!!str", Value: string(value)}}}
		}
		c.Graft(selector, v.Content[0])
		dir := t.TempDir()
		if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := c.YAML()
		switch layout % 3 {
		case 1:
			manifest = append(append(manifest, "---\n"...), g.Case(int(index)+1).YAML()...)
		case 2:
			if err := os.WriteFile(filepath.Join(dir, "kustomization.yaml"), []byte("resources: [objects.yaml]\n"), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "objects.yaml"), manifest, 0o644); err != nil {
			t.Fatal(err)
		}
		for _, args := range [][]string{{"validate", dir}, {"build", dir, "-o", filepath.Join(t.TempDir(), "out")}} {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), args, strings.NewReader(""), &stdout, &stderr)
			if strings.Contains(stderr.String(), "internal error") || code < 0 || code > 2 || code != 0 && stderr.Len() == 0 && stdout.Len() == 0 {
				t.Fatalf("knc %s: exit %d\nstderr: %s\ninput:\n%s", args[0], code, stderr.String(), manifest)
			}
		}
	})
}
