package kustomize

import (
	"log"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/inputfs"
)

// TestDeprecationWarningsNameEveryField checks that each field kustomize
// deprecates (sigs.k8s.io/kustomize/api/types Kustomization.
// CheckDeprecatedFields) is warned of at its own key, with what replaces
// it, rather than as kustomize's text at the top of the file.
func TestDeprecationWarningsNameEveryField(t *testing.T) {
	dir := t.TempDir()
	kfile := filepath.Join(dir, "kustomization.yaml")
	text := `apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
bases: [../base]
commonLabels: {app: shop}
imageTags: [{name: nginx, newTag: "1"}]
patchesJson6902: []
patchesStrategicMerge: [patch.yaml]
vars: []
resources: [broker.yaml]
`
	if err := os.WriteFile(kfile, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	got := deprecationWarnings(inputfs.Disk, []string{kfile, filepath.Join(dir, "broker.yaml")}, filepath.Base)
	warn := func(line int, field, use string) diag.Diagnostic {
		return diag.Diagnostic{
			Pos:      diag.Pos{File: "kustomization.yaml", Line: line, Column: 1},
			Path:     field,
			Message:  "deprecated by kustomize; use " + use + " instead (kustomize edit fix rewrites the file)",
			Severity: diag.Warning,
		}
	}
	want := diag.List{
		warn(3, "bases", "resources"),
		warn(4, "commonLabels", "labels"),
		warn(5, "imageTags", "images"),
		warn(6, "patchesJson6902", "patches"),
		warn(7, "patchesStrategicMerge", "patches"),
		warn(8, "vars", "replacements"),
	}
	if diff := cmp.Diff(want, got.Sorted()); diff != "" {
		t.Errorf("warnings (-want +got):\n%s", diff)
	}
}

// TestCaptureOutputRestoresStderr checks that what a build writes to the
// process's stderr and to the standard logger is returned as lines, and
// that both are what they were afterwards.
func TestCaptureOutputRestoresStderr(t *testing.T) {
	stderr, logOut := os.Stderr, log.Writer()
	lines := captureOutput(func() {
		_, _ = os.Stderr.WriteString("# Warning: one\n\n")
		log.Printf("two %d", 2)
	})
	if diff := cmp.Diff([]string{"# Warning: one", "two 2"}, lines); diff != "" {
		t.Errorf("lines (-want +got):\n%s", diff)
	}
	if os.Stderr != stderr || log.Writer() != logOut {
		t.Error("os.Stderr or the standard logger's output was not restored")
	}
}
