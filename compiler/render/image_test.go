package render_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/version"
	"github.com/knc-dev/knc/plugins"
)

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

func TestDefaultImage(t *testing.T) {
	tests := []struct {
		name   string
		v      version.Info
		want   string
		pinned bool
	}{
		{"release with its digest", version.Info{Version: "v0.3.0", ImageDigest: digest}, "ghcr.io/knc-dev/knc:v0.3.0@" + digest, true},
		{"release without digest", version.Info{Version: "v0.3.0"}, "ghcr.io/knc-dev/knc:v0.3.0", true},
		{"development build", version.Info{Version: version.Devel}, "ghcr.io/knc-dev/knc:latest", false},
		{"untagged commit", version.Info{Version: "v0.3.1-0.20261123101010-abcdefabcdef"}, "ghcr.io/knc-dev/knc:latest", false},
		{"modified tree", version.Info{Version: "v0.3.0", Commit: "abc-dirty"}, "ghcr.io/knc-dev/knc:latest", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, pinned := render.DefaultImage(tt.v)
			if got != tt.want || pinned != tt.pinned {
				t.Errorf("DefaultImage = %q, %v; want %q, %v", got, pinned, tt.want, tt.pinned)
			}
		})
	}
}

// renderWith builds the project in files with opts.
func renderWith(t *testing.T, files map[string]string, opts render.Options) *render.Output {
	t.Helper()
	dir := t.TempDir()
	writeTree(t, dir, files)
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatal(res.Diagnostics)
	}
	out, diags, err := render.Render(res.Set, res.Config, opts)
	if err != nil || len(diags) > 0 {
		t.Fatalf("render: %v %v", err, diags)
	}
	return out
}

// TestReleaseBuild: a release writes its own image pinned to its digest,
// without warning, and labels what it generates with its version; the
// repository's own objects keep their labels.
func TestReleaseBuild(t *testing.T) {
	out := renderWith(t, map[string]string{"knc.yaml": config, "m.yaml": project}, render.Options{Backends: plugins.Backends, Version: version.Info{Version: "v0.3.0", ImageDigest: digest}})
	if len(out.Warnings) > 0 {
		t.Errorf("warnings: %v", out.Warnings)
	}
	runtime := string(file(t, out, "namespaces/ns1/runtime.yaml"))
	if !strings.Contains(runtime, `image: "ghcr.io/knc-dev/knc:v0.3.0@`+digest+`"`) {
		t.Errorf("runtime.yaml does not run the release's pinned image:\n%s", runtime)
	}
	for _, f := range []string{"namespaces/ns1/runtime.yaml", "cluster/runtime.yaml", "cluster/admission.yaml", "crds/brokers.eventing.knative.dev.yaml"} {
		for _, obj := range objects(t, file(t, out, f)) {
			labels, _ := obj["metadata"].(map[string]any)["labels"].(map[string]any)
			if labels[render.VersionLabel] != "v0.3.0" {
				t.Errorf("%s: %s %s has labels %v, without %s: v0.3.0", f, obj["kind"], name(obj), labels, render.VersionLabel)
			}
		}
	}
	for _, obj := range objects(t, file(t, out, "namespaces/ns1/brokers.yaml")) {
		if labels, _ := obj["metadata"].(map[string]any)["labels"].(map[string]any); labels[render.VersionLabel] != nil {
			t.Errorf("the repository's Broker %s got a version label", name(obj))
		}
	}
}

// TestDevelopmentBuildWarns: a knc that is not a release warns about its
// unpinned image at runtime.image of knc.yaml, unless an image is given.
func TestDevelopmentBuildWarns(t *testing.T) {
	files := map[string]string{"knc.yaml": config, "m.yaml": project}
	out := renderWith(t, files, render.Options{Backends: plugins.Backends, Version: version.Info{Version: version.Devel}})
	if len(out.Warnings) != 1 || out.Warnings[0].Severity != diag.Warning || out.Warnings[0].Path != "runtime.image" {
		t.Fatalf("warnings: %v", out.Warnings)
	}
	if !strings.Contains(out.Warnings[0].Message, "ghcr.io/knc-dev/knc:latest") {
		t.Errorf("warning %q does not name the image", out.Warnings[0].Message)
	}
	out = renderWith(t, files, render.Options{Backends: plugins.Backends, Version: version.Info{Version: version.Devel}, Image: "registry.example/knc:v1"})
	if diff := cmp.Diff(diag.List(nil), out.Warnings); diff != "" {
		t.Errorf("warnings with an image given (-want +got):\n%s", diff)
	}
}
