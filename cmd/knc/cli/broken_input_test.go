package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"
)

// brokenInputs are projects with one malformed file each. Every command
// that reads manifests must report them as invalid input (exit 1) with a
// FILE:LINE:COLUMN position, and never panic.
var brokenInputs = []struct {
	name  string
	files map[string]string
	// where is the file the position must name.
	where string
}{
	{"unterminated flow sequence", map[string]string{
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: [b\n",
	}, "broker.yaml"},
	{"tab indentation", map[string]string{
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n\tname: b\n",
	}, "broker.yaml"},
	{"unterminated string", map[string]string{
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: \"b\n",
	}, "broker.yaml"},
	{"binary garbage", map[string]string{
		"broker.yaml": "\x00\x01\x02kind: \xff\xfe\n",
	}, "broker.yaml"},
	{"wrong field type", map[string]string{
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: b\nspec: [1, 2]\n",
	}, "broker.yaml"},
	{"second document broken", map[string]string{
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: b\n---\nkind: {\n",
	}, "broker.yaml"},
	{"trigger of a missing broker", map[string]string{
		"trigger.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: t\nspec:\n  broker: missing\n  subscriber:\n    uri: http://example.com/\n",
	}, "trigger.yaml"},
	{"malformed JSON manifest", map[string]string{
		"broker.json": "{\"apiVersion\": \"eventing.knative.dev/v1\",\n \"kind\": \"Broker\",\n \"metadata\": {\"name\": \"b\"}\n",
	}, "broker.json"},
	{"empty knc.yaml", map[string]string{
		"knc.yaml":    "# nothing here\n",
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: b\n",
	}, "knc.yaml"},
	{"malformed knc.yaml", map[string]string{
		"knc.yaml":    "apiVersion: config.knc.dev/v1alpha1\nkind: Config\nruntime: {replicas: [\n",
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: b\n",
	}, "knc.yaml"},
}

func TestBrokenInputInEveryCommand(t *testing.T) {
	commands := []struct {
		name string
		args func(dir, scratch string) []string
		// code is the exit code for invalid input: 1, but 2 for diff,
		// whose 1 means "differences".
		code int
	}{
		{"validate", func(dir, _ string) []string { return []string{"validate", dir} }, exitFailed},
		{"build", func(dir, scratch string) []string { return []string{"build", dir, "-o", filepath.Join(scratch, "out")} }, exitFailed},
		{"run", func(dir, scratch string) []string {
			return []string{"run", dir, "--http-addr", "127.0.0.1:0", "--data-dir", filepath.Join(scratch, "data")}
		}, exitFailed},
		{"route", func(dir, scratch string) []string {
			return []string{"route", dir, "--broker", "default/b", "--event", filepath.Join(scratch, "event.json")}
		}, exitFailed},
		{"diff", func(dir, scratch string) []string {
			return []string{"diff", dir, "--against", filepath.Join(scratch, "empty")}
		}, exitTrouble},
		{"graph", func(dir, _ string) []string { return []string{"graph", dir} }, exitFailed},
	}
	for _, in := range brokenInputs {
		for _, cmd := range commands {
			t.Run(in.name+"/"+cmd.name, func(t *testing.T) {
				dir := t.TempDir()
				// The search for knc.yaml stops at the top of a git work
				// tree, so that none above the test's directory is found.
				if err := os.Mkdir(filepath.Join(dir, ".git"), 0o755); err != nil {
					t.Fatal(err)
				}
				for name, content := range in.files {
					if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				scratch := t.TempDir()
				event := `{"specversion":"1.0","id":"1","source":"/s","type":"t"}`
				if err := os.WriteFile(filepath.Join(scratch, "event.json"), []byte(event), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Mkdir(filepath.Join(scratch, "empty"), 0o755); err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				var stdout, stderr bytes.Buffer
				code := run(ctx, cmd.args(dir, scratch), nil, &stdout, &stderr)
				if code != cmd.code {
					t.Errorf("exit code %d, want %d (invalid input)\nstderr:\n%s", code, cmd.code, &stderr)
				}
				pos := regexp.MustCompile(regexp.QuoteMeta(in.where) + `:\d+:\d+: `)
				if !pos.Match(stderr.Bytes()) && !pos.Match(stdout.Bytes()) {
					t.Errorf("no %s:LINE:COLUMN position reported\nstdout:\n%s\nstderr:\n%s", in.where, &stdout, &stderr)
				}
			})
		}
	}
}
