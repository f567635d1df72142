package kustomize

import (
	"os"
	"path/filepath"
	"testing"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/benchcorpus"
)

// TestBuildMatchesFlux holds build to what Flux's kustomize.Build renders,
// byte for byte, errors included, for the kustomizations of the project's
// fixtures and for some that use what build treats apart: an openapi
// field, which changes kustomize's global schema, built between others so
// that a schema left behind would show in the next output.
func TestBuildMatchesFlux(t *testing.T) {
	tmp := t.TempDir()
	write := func(files map[string]string) {
		for name, text := range files {
			path := filepath.Join(tmp, name)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	broker := "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: default\n  labels: {team: shop}\nspec:\n  delivery:\n    retry: 3\n"
	write(map[string]string{
		"base/kustomization.yaml":    "resources: [broker.yaml]\n",
		"base/broker.yaml":           broker,
		"labels/kustomization.yaml":  "resources: [../base]\nnamespace: shop\nlabels:\n- pairs: {env: prod}\n  includeSelectors: true\nnamePrefix: prod-\n",
		"schema/kustomization.yaml":  "resources: [../base]\nopenapi:\n  version: v1.21.2\n",
		"missing/kustomization.yaml": "resources: [../base, nowhere.yaml]\n",
		"badpatch/kustomization.yaml": "resources: [../base]\npatches:\n- target: {kind: Broker, name: absent}\n  patch: |\n" +
			"    - op: replace\n      path: /spec/nothing/here\n      value: 1\n",
		"list/kustomization.yaml": "resources: [list.yaml]\n",
		"list/list.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n" +
			"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
	})
	corpus := filepath.Join(tmp, "corpus")
	if err := benchcorpus.WriteSplit(corpus, benchcorpus.Shape{Objects: 200}, 2, true); err != nil {
		t.Fatal(err)
	}
	dirs := []string{
		"../../internal/cli/testdata/gitops/apps/production",
		"../../internal/cli/testdata/gitops/apps/staging",
		"../../internal/cli/testdata/gitops/clusters/production",
		"../../internal/kubetest/testdata/kustomization",
		filepath.Join(tmp, "labels"),
		filepath.Join(tmp, "schema"),
		filepath.Join(tmp, "labels"),
		filepath.Join(tmp, "missing"),
		filepath.Join(tmp, "badpatch"),
		filepath.Join(tmp, "list"),
		filepath.Join(corpus, "overlays", "part-1"),
		filepath.Join(tmp, "schema"),
		filepath.Join(tmp, "base"),
	}
	render := func(dir string, flux bool) (string, string) {
		t.Helper()
		abs, err := filepath.Abs(dir)
		if err != nil {
			t.Fatal(err)
		}
		root := filepath.Dir(filepath.Dir(abs))
		fs, err := securefs.MakeFsOnDiskSecure(root)
		if err != nil {
			t.Fatal(err)
		}
		var out []byte
		if flux {
			m, err := fluxkustomize.Build(fs, abs)
			if err != nil {
				return "", err.Error()
			}
			out, err = m.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
		} else {
			m, err := build(fs, abs, namesSchema(abs, map[string]bool{}))
			if err != nil {
				return "", err.Error()
			}
			out, err = m.AsYaml()
			if err != nil {
				t.Fatal(err)
			}
		}
		return string(out), ""
	}
	// Both orders: each renderer follows the other, and itself.
	for _, fluxFirst := range []bool{true, false} {
		for _, dir := range dirs {
			first, firstErr := render(dir, fluxFirst)
			second, secondErr := render(dir, !fluxFirst)
			flux, fluxErr, knc, kncErr := first, firstErr, second, secondErr
			if !fluxFirst {
				flux, fluxErr, knc, kncErr = second, secondErr, first, firstErr
			}
			if diff := cmp.Diff(flux, knc); diff != "" {
				t.Errorf("%s: output differs from Flux's (-flux +knc):\n%s", dir, diff)
			}
			if diff := cmp.Diff(fluxErr, kncErr); diff != "" {
				t.Errorf("%s: error differs from Flux's (-flux +knc):\n%s", dir, diff)
			}
			if flux == "" && fluxErr == "" {
				t.Errorf("%s: Flux rendered nothing", dir)
			}
		}
	}
}
