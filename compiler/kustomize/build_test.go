package kustomize

import (
	"os"
	"path/filepath"
	"testing"

	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/benchcorpus"
	"github.com/knc-dev/knc/internal/inputfs"
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
		// A schema that gives Widget's spec.parts a merge key: with it, the
		// patch merges the list; without, it replaces the list.
		"widget/widget.yaml": "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  parts:\n  - {name: a, size: 1}\n  - {name: b, size: 2}\n",
		"widget/patch.yaml":  "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w}\nspec:\n  parts:\n  - {name: a, size: 3}\n",
		"widget/schema.json": `{"definitions": {"com.example.v1.Widget": {
  "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "Widget", "version": "v1"}],
  "properties": {"spec": {"properties": {"parts": {"type": "array",
    "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge",
    "items": {"type": "object", "properties": {"name": {"type": "string"}, "size": {"type": "integer"}}}}}}}}}}`,
		"widget/with-schema/kustomization.yaml": "resources: [../widget.yaml]\npatches: [{path: ../patch.yaml}]\nopenapi:\n  path: ../schema.json\n",
		"widget/without/kustomization.yaml":     "resources: [../widget.yaml]\npatches: [{path: ../patch.yaml}]\n",
		"list/kustomization.yaml":               "resources: [list.yaml]\n",
		"list/list.yaml": "apiVersion: v1\nkind: List\nitems:\n- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: a}\n" +
			"- apiVersion: v1\n  kind: ConfigMap\n  metadata: {name: b}\n",
	})
	corpus := filepath.Join(tmp, "corpus")
	if err := benchcorpus.WriteLayout(corpus, benchcorpus.Shape{Objects: 200}, 2, benchcorpus.Overlays); err != nil {
		t.Fatal(err)
	}
	dirs := []string{
		"../../cmd/knc/cli/testdata/gitops/apps/production",
		"../../cmd/knc/cli/testdata/gitops/apps/staging",
		"../../cmd/knc/cli/testdata/gitops/clusters/production",
		"../../internal/kubetest/testdata/kustomization",
		filepath.Join(tmp, "labels"),
		filepath.Join(tmp, "schema"),
		filepath.Join(tmp, "labels"),
		filepath.Join(tmp, "widget", "with-schema"),
		filepath.Join(tmp, "widget", "without"),
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
			m, _, err := build(fs, abs, namesSchema(inputfs.Disk, abs, map[string]bool{}))
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
	// The schema case must change the output, or it tests nothing.
	withSchema, err1 := render(filepath.Join(tmp, "widget", "with-schema"), true)
	without, err2 := render(filepath.Join(tmp, "widget", "without"), true)
	if err1 != "" || err2 != "" || withSchema == without {
		t.Fatalf("the custom schema does not change the Widget's rendering (errors %q, %q):\n%s", err1, err2, withSchema)
	}
	// Each renderer builds every directory in turn, so that a build
	// follows a build of the same renderer; then the other does.
	type result struct{ out, err string }
	all := func(flux bool) []result {
		var rs []result
		for _, dir := range dirs {
			out, err := render(dir, flux)
			rs = append(rs, result{out, err})
		}
		return rs
	}
	for _, fluxFirst := range []bool{true, false} {
		first, second := all(fluxFirst), all(!fluxFirst)
		flux, knc := first, second
		if !fluxFirst {
			flux, knc = second, first
		}
		for i, dir := range dirs {
			if diff := cmp.Diff(flux[i].out, knc[i].out); diff != "" {
				t.Errorf("%s: output differs from Flux's (-flux +knc):\n%s", dir, diff)
			}
			if diff := cmp.Diff(flux[i].err, knc[i].err); diff != "" {
				t.Errorf("%s: error differs from Flux's (-flux +knc):\n%s", dir, diff)
			}
			if flux[i].out == "" && flux[i].err == "" {
				t.Errorf("%s: Flux rendered nothing", dir)
			}
		}
	}
}
