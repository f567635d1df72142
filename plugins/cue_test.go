package plugins_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/plugins"
)

// A plugin is evaluated, never run as a command: the tool packages, which
// declare commands, file reads and HTTP calls, are refused at the import.
func TestCUEPluginMayNotImportToolPackages(t *testing.T) {
	for _, pkg := range []string{"tool/exec", "tool/file", "tool/http", "tool/os", "tool/cli"} {
		t.Run(pkg, func(t *testing.T) {
			root := t.TempDir()
			writePlugin(t, root, "tool", "package tool\n\nimport \"strings\"\nimport t \""+pkg+"\"\n\n_task: t\nclass: strings.ToLower(\"X\")\nrender: output: []\n")
			ps, diags, err := plugins.LoadCUE(inputfs.Disk, root, cuelimit.Default)
			if err != nil {
				t.Fatal(err)
			}
			if len(ps) != 0 {
				t.Errorf("loaded %d plugins, want none", len(ps))
			}
			want := `plugin.cue:4:8: plugin tool imports "` + pkg + `": a plugin is evaluated, never run as a command, so it may not use the tool packages (tool/exec, tool/file, tool/http, tool/os, tool/cli): compute render.output from render.input alone`
			if len(diags) != 1 || !strings.HasSuffix(diags[0].String(), want) {
				t.Errorf("diagnostics %v, want one ending %q", diags, want)
			}
		})
	}
}

// slowOutput is a render.output that takes some hundreds of milliseconds
// to evaluate and then ends by itself, so that an evaluation left running
// does not outlive the test by much. It depends on the input, so it only
// runs when an object is rendered.
const slowOutput = `package slow

import "list"

class: "slow"
render: {
	input: {namespace: string, broker: {metadata: name: string, ...}}
	output: [{
		apiVersion: "v1"
		kind:       "ConfigMap"
		metadata: name: input.broker.metadata.name
		data: n: "\(len([for i in list.Range(0, 20000+len(input.broker.metadata.name), 1) {i}]))"
	}]
}
`

func TestCUEPluginRenderOverItsLimitsIsStopped(t *testing.T) {
	root := t.TempDir()
	writePlugin(t, root, "slow", slowOutput)
	ps, diags, err := plugins.LoadCUE(inputfs.Disk, root, cuelimit.Limits{})
	if err != nil || len(diags) > 0 {
		t.Fatal(err, diags)
	}
	plugins.SetRenderLimits(ps[0], cuelimit.Limits{Timeout: 10 * time.Millisecond})
	_, err = ps[0].Render(&plugins.Request{Namespace: "ns", Brokers: []plugins.Claimed{{Object: plugins.Object{"kind": "Broker", "metadata": map[string]any{"name": "b"}}}}})
	var ex *cuelimit.Exceeded
	if !errors.As(err, &ex) {
		t.Fatalf("Render = %v; want *cuelimit.Exceeded", err)
	}
	want := "evaluation of plugin slow (.knc/plugins/slow) stopped after 10ms, its time limit, while rendering Broker ns/b: make the plugin cheaper"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error:\n got %s\nwant it to start with %s", err, want)
	}
}

func TestCUEPluginLoadOverItsLimitsIsStopped(t *testing.T) {
	root := t.TempDir()
	writePlugin(t, root, "slow", "package slow\n\nimport \"list\"\n\nclass: \"slow\"\nrender: output: []\n_n: len([for i in list.Range(0, 20000, 1) {i}])\n")
	_, _, err := plugins.LoadCUE(inputfs.Disk, root, cuelimit.Limits{Timeout: 10 * time.Millisecond})
	want := "evaluation of plugin slow (.knc/plugins/slow) stopped after 10ms, its time limit, while loading it: make the plugin cheaper"
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("LoadCUE error:\n got %v\nwant it to start with %s", err, want)
	}
}
