package compiler_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/internal/version"
	"github.com/knc-dev/knc/plugins"
)

// fluxLayout is a repository as the docs lay it out: a base, and two
// overlays that include it.
var fluxLayout = map[string]string{
	"knc.yaml":                     "apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: shop\n",
	"apps/base/kustomization.yaml": "resources: [broker.yaml, trigger.yaml, service.yaml]\n",
	"apps/base/broker.yaml":        "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: default}\n",
	"apps/base/trigger.yaml": `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: orders}
spec:
  broker: default
  filter: {attributes: {type: order.created}}
  subscriber: {ref: {apiVersion: v1, kind: Service, name: orders}}
`,
	"apps/base/service.yaml":             "apiVersion: v1\nkind: Service\nmetadata: {name: orders}\nspec: {ports: [{port: 80}]}\n",
	"apps/staging/kustomization.yaml":    "namespace: shop\nresources: [../base]\n",
	"apps/production/kustomization.yaml": "namespace: shop\nresources: [../base]\n",
}

func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestBuildRunsEveryStage runs the whole pipeline over a Flux layout: each
// stage runs once, in the order Stages gives, and each overlay ends as a
// unit with its routing table and its build in a subdirectory of its own.
func TestBuildRunsEveryStage(t *testing.T) {
	dir := writeTree(t, fluxLayout)
	var ran []compiler.Stage
	res, err := compiler.Build(context.Background(), compiler.Options{
		Dir:      dir,
		Policies: &compiler.Policies{},
		Select:   compiler.EachUnit,
		Command:  "build",
		Routes:   &compiler.RouteOptions{},
		Render:   &compiler.RenderOptions{Image: "example.com/knc@sha256:" + strings.Repeat("0", 64), Version: version.Get(), Backends: plugins.Backends},
		After:    func(s compiler.Stage, _ *compiler.Result) { ran = append(ran, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(compiler.Stages, ran); diff != "" {
		t.Errorf("stages run (-want +got):\n%s", diff)
	}
	if res.Stopped != "" || len(res.Diagnostics) > 0 || len(res.Later) > 0 {
		t.Fatalf("stopped at %q: %v %v", res.Stopped, res.Diagnostics, res.Later)
	}
	var units []string
	for _, u := range res.Units {
		units = append(units, u.Name()+" → "+u.OutputDir)
		if u.Table == nil || len(u.Table.Brokers) != 1 {
			t.Errorf("%s: routing table %+v, want one Broker", u.Name(), u.Table)
		}
	}
	want := []string{"kustomization apps/production → apps/production", "kustomization apps/staging → apps/staging"}
	if diff := cmp.Diff(want, units); diff != "" {
		t.Errorf("units (-want +got):\n%s", diff)
	}
	for _, prefix := range []string{"apps/production/", "apps/staging/"} {
		if !slices.ContainsFunc(res.Output.Files, func(f compiler.OutputFile) bool { return strings.HasPrefix(f.Path, prefix) }) {
			t.Errorf("no file of the build under %s", prefix)
		}
	}
}

// TestBuildStopsAtTheStageThatFails checks that no stage works on what an
// earlier one refused: an error of the checks ends the pipeline there.
func TestBuildStopsAtTheStageThatFails(t *testing.T) {
	files := map[string]string{}
	for k, v := range fluxLayout {
		files[k] = v
	}
	files["apps/base/trigger.yaml"] = strings.Replace(files["apps/base/trigger.yaml"], "broker: default", "broker: missing", 1)
	var ran []compiler.Stage
	res, err := compiler.Build(context.Background(), compiler.Options{
		Dir:    writeTree(t, files),
		Routes: &compiler.RouteOptions{},
		Render: &compiler.RenderOptions{Backends: plugins.Backends},
		After:  func(s compiler.Stage, _ *compiler.Result) { ran = append(ran, s) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []compiler.Stage{compiler.StageConfig, compiler.StageDiscover, compiler.StageKustomize, compiler.StageDecode, compiler.StageCheck}
	if diff := cmp.Diff(want, ran); diff != "" {
		t.Errorf("stages run (-want +got):\n%s", diff)
	}
	if res.Stopped != compiler.StageCheck || res.Output != nil || res.Valid() {
		t.Errorf("stopped at %q with output %v, valid %v; want stopped at check, no output", res.Stopped, res.Output, res.Valid())
	}
	// The error is in the base both overlays share: one diagnostic,
	// naming both.
	if len(res.Diagnostics) != 1 || !strings.Contains(res.Diagnostics[0].Message, "kustomizations apps/production, apps/staging") {
		t.Errorf("diagnostics %v, want one naming both overlays", res.Diagnostics)
	}
}

// TestBuildSelectsOneUnit checks that a command needing one unit is told
// which units the paths hold, with the result of the stages before.
func TestBuildSelectsOneUnit(t *testing.T) {
	dir := writeTree(t, fluxLayout)
	res, err := compiler.Build(context.Background(), compiler.Options{Dir: dir, Select: compiler.OneUnit, Command: "graph"})
	var sel *compiler.SelectError
	if !errors.As(err, &sel) || res == nil || !res.Valid() {
		t.Fatalf("err %v (%T), result %v: want a *SelectError with the valid result", err, err, res)
	}
	want := "the paths hold 2 deploy units, each deployed on its own: kustomization apps/production, kustomization apps/staging; graph one at a time, such as knc graph apps/staging"
	if diff := cmp.Diff(want, err.Error()); diff != "" {
		t.Errorf("message (-want +got):\n%s", diff)
	}
	res, err = compiler.Build(context.Background(), compiler.Options{Dir: dir, Paths: []string{"apps/staging"}, Select: compiler.OneUnit, Command: "graph", Routes: &compiler.RouteOptions{}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Units) != 1 || res.Table == nil {
		t.Errorf("units %d, table %v: want one unit with its table", len(res.Units), res.Table)
	}
}

// TestBuildStopsWhenCancelled checks that a cancelled context stops the
// pipeline before its next stage.
func TestBuildStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var ran []compiler.Stage
	_, err := compiler.Build(ctx, compiler.Options{
		Dir:   writeTree(t, fluxLayout),
		After: func(s compiler.Stage, _ *compiler.Result) { ran = append(ran, s); cancel() },
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]compiler.Stage{compiler.StageConfig}, ran); diff != "" {
		t.Errorf("stages run (-want +got):\n%s", diff)
	}
}

// TestBuildReportsChecksAndPoliciesTogether checks that one run reports
// both what the checks refuse and what the policies refuse, even where
// the checks found errors.
func TestBuildReportsChecksAndPoliciesTogether(t *testing.T) {
	files := map[string]string{}
	for k, v := range fluxLayout {
		files[k] = v
	}
	files["apps/base/trigger.yaml"] = strings.Replace(files["apps/base/trigger.yaml"], "broker: default", "broker: missing", 1)
	files[".knc/policies/owner.cue"] = `policy: owner: {
	match: kind: "Broker"
	constrain: metadata: labels: "app.kubernetes.io/owner"!: _
	message: "every Broker names its owner"
}
`
	res, err := compiler.Build(context.Background(), compiler.Options{Dir: writeTree(t, files), Policies: &compiler.Policies{}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.Pos.File+": "+strings.SplitN(d.Message, ":", 2)[0])
	}
	want := []string{
		"apps/base/broker.yaml: policy owner",
		"apps/base/trigger.yaml: Broker \"missing\" not found in namespace \"shop\"",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

// TestBuildWritesTheRoutesStageTable checks that the render stage writes
// the routing table the routes stage compiled, with the options a command
// gave that stage, rather than compiling another.
func TestBuildWritesTheRoutesStageTable(t *testing.T) {
	const address = "http://orders.shop.test.example"
	res, err := compiler.Build(context.Background(), compiler.Options{
		Dir:   writeTree(t, fluxLayout),
		Paths: []string{"apps/staging"},
		Routes: &compiler.RouteOptions{Address: func(string) (func(*compiler.Reference) (string, bool), error) {
			return func(r *compiler.Reference) (string, bool) { return address, r.Kind == "Service" && r.Name == "orders" }, nil
		}},
		Render: &compiler.RenderOptions{Image: "example.com/knc@sha256:" + strings.Repeat("0", 64), Version: version.Get(), Backends: plugins.Backends},
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() || res.Output == nil || res.Table == nil {
		t.Fatalf("stopped at %q: %v %v", res.Stopped, res.Diagnostics, res.Later)
	}
	if got := res.Table.Brokers[0].Triggers[0].Subscriber.URI; got != address {
		t.Fatalf("the routes stage resolved the subscriber to %q, want %q", got, address)
	}
	var tables int
	for _, f := range res.Output.Files {
		if !strings.Contains(string(f.Data), `"triggers"`) {
			continue
		}
		tables++
		if !strings.Contains(string(f.Data), address) {
			t.Errorf("%s holds a routing table without the address the routes stage resolved", f.Path)
		}
	}
	if tables == 0 {
		t.Error("the output holds no routing table")
	}
}
