package compiler_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/internal/version"
	"github.com/knc-dev/knc/plugins"
)

// fsProject is a Flux layout that takes every stage's reading path: a
// base and two overlays, one built by knc's own renderer with a patch,
// the other by krusty (its generator is outside the subset knc renders),
// a knc.yaml that excludes a directory, a policy, and a symbolic link
// within the project.
func fsProject() map[string]string {
	files := map[string]string{}
	for k, v := range fluxLayout {
		files[k] = v
	}
	files["apps/staging/kustomization.yaml"] = "namespace: shop\nresources: [../base]\npatches: [{path: retry.yaml}]\n"
	files["apps/staging/retry.yaml"] = "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: orders}\nspec: {delivery: {retry: 3}}\n"
	files["apps/production/kustomization.yaml"] = "namespace: shop\nresources: [../base, ../shared/audit.yaml]\nconfigMapGenerator: [{name: settings, literals: [mode=prod]}]\n"
	files["apps/shared/audit-trigger.yaml"] = `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: audit}
spec:
  broker: default
  subscriber: {ref: {apiVersion: v1, kind: Service, name: orders}}
`
	files[".knc/policies/owner.cue"] = `policy: owner: {
	match: kind: "Broker"
	constrain: metadata: labels: "app.kubernetes.io/owner"!: _
	message: "every Broker names its owner"
	severity: "warning"
}
`
	files["notes/ci.yaml"] = "steps: [build]\n"
	files["knc.yaml"] += "exclude: [apps/shared]\n"
	// The top of a git work tree bounds what kustomize may read.
	files[".git/HEAD"] = "ref: refs/heads/main\n"
	return files
}

// links of fsProject, by path: target.
var fsProjectLinks = map[string]string{"apps/shared/audit.yaml": "audit-trigger.yaml"}

func mapFS(files, links map[string]string) fstest.MapFS {
	m := fstest.MapFS{}
	for name, text := range files {
		m[name] = &fstest.MapFile{Data: []byte(text), Mode: 0o644}
	}
	for name, target := range links {
		m[name] = &fstest.MapFile{Data: []byte(target), Mode: fs.ModeSymlink | 0o777}
	}
	return m
}

func writeLinks(t *testing.T, dir string, links map[string]string) {
	t.Helper()
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
}

// built is what a test compares of two builds: everything a command
// prints or writes, with the files of each unit relative to the top.
type built struct {
	Stopped     compiler.Stage
	Diagnostics []string
	Later       []string
	Skipped     []string
	Units       []string
	Output      map[string]string
}

func summary(t *testing.T, res *compiler.Result, top string) built {
	t.Helper()
	b := built{Stopped: res.Stopped, Output: map[string]string{}}
	// A file outside the directory built from is named by its absolute
	// path, which starts at the top of the project on the disk and at
	// FSMount over an fs.FS.
	prefix := top
	if !strings.HasSuffix(prefix, string(filepath.Separator)) {
		prefix += string(filepath.Separator)
	}
	fromTop := func(s string) string {
		if rest, ok := strings.CutPrefix(s, prefix); ok {
			return "TOP/" + filepath.ToSlash(rest)
		}
		return s
	}
	for _, d := range res.Diagnostics {
		b.Diagnostics = append(b.Diagnostics, fromTop(d.String()))
	}
	for _, d := range res.Later {
		b.Later = append(b.Later, fromTop(d.String()))
	}
	for _, s := range res.Skipped {
		b.Skipped = append(b.Skipped, s.Path+": "+s.Reason)
	}
	for _, u := range res.Units {
		var files []string
		for _, f := range u.Files {
			rel, err := filepath.Rel(top, f)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, filepath.ToSlash(rel))
		}
		b.Units = append(b.Units, fmt.Sprintf("%s → %q %v (%d Knative objects)", u.Name(), u.OutputDir, files, u.Knative()))
	}
	if res.Output != nil {
		for _, f := range res.Output.Files {
			b.Output[f.Path] = string(f.Data)
		}
	}
	return b
}

// buildBoth builds the project from the disk and from an fstest.MapFS,
// from the same directory of it, and returns both results.
func buildBoth(t *testing.T, files, links map[string]string, dir string, paths []string) (disk, overFS built) {
	t.Helper()
	top := writeTree(t, files)
	writeLinks(t, top, links)
	opts := func() compiler.Options {
		return compiler.Options{
			Paths:    paths,
			Policies: &compiler.Policies{},
			Select:   compiler.EachUnit,
			Command:  "build",
			Routes:   &compiler.RouteOptions{},
			Render:   &compiler.RenderOptions{Image: "example.com/knc@sha256:" + strings.Repeat("0", 64), Version: version.Get(), Backends: plugins.Backends},
		}
	}
	onDisk := opts()
	onDisk.Dir = filepath.Join(top, filepath.FromSlash(dir))
	res, err := compiler.Build(context.Background(), onDisk)
	if err != nil {
		t.Fatalf("build from the disk: %v", err)
	}
	disk = summary(t, res, top)
	inFS := opts()
	inFS.FS, inFS.Dir = mapFS(files, links), dir
	res, err = compiler.Build(context.Background(), inFS)
	if err != nil {
		t.Fatalf("build over the fs.FS: %v", err)
	}
	return disk, summary(t, res, compiler.DefaultFSMount)
}

// TestBuildOverMapFS runs the whole pipeline, routes and render included,
// over an fstest.MapFS, and over the same files on the disk: the units,
// diagnostics (file:line:col) and rendered files are the same.
func TestBuildOverMapFS(t *testing.T) {
	for _, tt := range []struct {
		name  string
		dir   string
		paths []string
	}{
		{name: "the whole repository", dir: ""},
		{name: "one overlay", dir: "", paths: []string{"apps/production"}},
		{name: "from an overlay's directory", dir: "apps/staging", paths: []string{"."}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			disk, overFS := buildBoth(t, fsProject(), fsProjectLinks, tt.dir, tt.paths)
			if diff := cmp.Diff(disk, overFS); diff != "" {
				t.Errorf("build over the fs.FS differs from the build from the disk (-disk +fs):\n%s", diff)
			}
			if len(overFS.Units) == 0 || len(overFS.Output) == 0 || len(overFS.Diagnostics) == 0 {
				t.Errorf("units %v, %d files rendered, diagnostics %v: want the overlays built and the policy's warning", overFS.Units, len(overFS.Output), overFS.Diagnostics)
			}
		})
	}
}

// TestBuildOverMapFSNamesTheFileInError checks that an error in a file of
// an fs.FS names the file and position as on the disk.
func TestBuildOverMapFSNamesTheFileInError(t *testing.T) {
	files := fsProject()
	files["apps/base/trigger.yaml"] = strings.Replace(files["apps/base/trigger.yaml"], "broker: default", "broker: missing", 1)
	disk, overFS := buildBoth(t, files, fsProjectLinks, "", nil)
	if diff := cmp.Diff(disk, overFS); diff != "" {
		t.Errorf("build over the fs.FS differs from the build from the disk (-disk +fs):\n%s", diff)
	}
	if overFS.Stopped != compiler.StagePolicies {
		t.Errorf("stopped at %q, want %q", overFS.Stopped, compiler.StagePolicies)
	}
	want := `apps/base/trigger.yaml:5:11: spec.broker: Broker "missing" not found`
	found := false
	for _, d := range overFS.Diagnostics {
		found = found || strings.HasPrefix(d, want)
	}
	if !found {
		t.Errorf("diagnostics %q: want one starting %q", overFS.Diagnostics, want)
	}
}
