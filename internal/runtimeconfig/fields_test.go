package runtimeconfig_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/runtimeconfig"
)

// TestEveryFieldReachesTheRuntime holds each setting to a place in
// knc.yaml and a way into the cluster's runtime, or a reason not to have
// one: a field added without them fails here.
func TestEveryFieldReachesTheRuntime(t *testing.T) {
	keys := map[string]string{}
	for _, f := range runtimeconfig.Fields {
		t.Run(f.Flag, func(t *testing.T) {
			if f.Commands == 0 || f.Type == "" || f.Usage == "" {
				t.Errorf("--%s: commands %d, type %q, usage %q; want all three", f.Flag, f.Commands, f.Type, f.Usage)
			}
			switch {
			case f.KncYAML != "" && f.WhyNotKncYAML != "":
				t.Errorf("--%s has knc.yaml field %s and a reason to have none", f.Flag, f.KncYAML)
			case f.KncYAML == "" && f.WhyNotKncYAML == "":
				t.Errorf("--%s has no knc.yaml field and no reason to have none", f.Flag)
			case f.KncYAML != "" && f.ConfigMapKey == "" && f.Rendered == "":
				t.Errorf("--%s comes from knc.yaml's %s, but nothing carries it to the cluster's runtime: give it a ConfigMap key", f.Flag, f.KncYAML)
			}
			if k := f.ConfigMapKey; k != "" {
				if !strings.HasPrefix(k, "KNC_") {
					t.Errorf("ConfigMap key %s of --%s: want the prefix KNC_", k, f.Flag)
				}
				if other, ok := keys[k]; ok {
					t.Errorf("ConfigMap key %s is both --%s's and --%s's", k, other, f.Flag)
				}
				keys[k] = f.Flag
				if f.Commands&runtimeconfig.Runtime == 0 {
					t.Errorf("--%s has ConfigMap key %s, but knc runtime has no such flag", f.Flag, k)
				}
			}
		})
	}
}

// TestDocsListEveryField keeps docs/runtime-flags.md the table's page.
// KNC_UPDATE=1 writes it.
func TestDocsListEveryField(t *testing.T) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
	file := filepath.Join(dir, "docs", "runtime-flags.md")
	want := runtimeconfig.Markdown()
	if os.Getenv("KNC_UPDATE") == "1" {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("docs/runtime-flags.md is not the table's page; regenerate it with KNC_UPDATE=1 (-want +got):\n%s", diff)
	}
}
