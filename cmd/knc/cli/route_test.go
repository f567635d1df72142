package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
)

// TestRouteExitCodes checks the exit codes that the testscript cases of
// knc route cannot see: 0 when the event was evaluated, 1 for an invalid
// table or event, 2 for usage and I/O errors.
func TestRouteExitCodes(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	table := write("table.json", `{"apiVersion": "routing.knc.dev/v1alpha1", "kind": "RoutingTable",
		"brokers": [{"namespace": "default", "name": "default", "path": "/brokers/default/default",
			"triggers": [{"namespace": "default", "name": "t", "filters": [{"exact": {"type": "nope"}}],
				"subscriber": {"uri": "http://127.0.0.1:8081/"}}]}]}`)
	badTable := write("bad-table.json", `{"apiVersion": "v0", "kind": "RoutingTable"}`)
	badCESQL := write("bad-cesql.json", `{"apiVersion": "routing.knc.dev/v1alpha1", "kind": "RoutingTable",
		"brokers": [{"namespace": "default", "name": "default", "path": "/brokers/default/default",
			"triggers": [{"namespace": "default", "name": "t", "filters": [{"cesql": "1 +"}],
				"subscriber": {"uri": "http://127.0.0.1:8081/"}}]}]}`)
	ev := write("event.json", `{"specversion": "1.0", "id": "1", "source": "/s", "type": "t"}`)
	badEvent := write("bad-event.json", `{"specversion": "1.0", "source": "/s", "type": "t"}`)
	missing := filepath.Join(dir, "missing.json")

	tests := []struct {
		name string
		args []string
		want int
	}{
		{"evaluated, nothing matched", []string{"--table", table, "--broker", "default/default", "--event", ev}, exitOK},
		{"json", []string{"--table", table, "--broker", "default/default", "--event", ev, "-o", "json"}, exitOK},
		{"bad -o", []string{"--table", table, "--broker", "default/default", "--event", ev, "-o", "yaml"}, exitTrouble},
		{"missing flag", []string{"--table", table, "--event", ev}, exitTrouble},
		{"unknown flag", []string{"--table", table, "--broker", "default/default", "--event", ev, "--bogus"}, exitTrouble},
		{"missing table file", []string{"--table", missing, "--broker", "default/default", "--event", ev}, exitTrouble},
		{"missing event file", []string{"--table", table, "--broker", "default/default", "--event", missing}, exitTrouble},
		{"unknown broker", []string{"--table", table, "--broker", "default/other", "--event", ev}, exitTrouble},
		{"invalid table", []string{"--table", badTable, "--broker", "default/default", "--event", ev}, exitFailed},
		{"invalid cesql", []string{"--table", badCESQL, "--broker", "default/default", "--event", ev}, exitFailed},
		{"invalid event", []string{"--table", table, "--broker", "default/default", "--event", badEvent}, exitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			got := run(context.Background(), append([]string{"route"}, tt.args...), &bytes.Buffer{}, &stdout, &stderr)
			if got != tt.want {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", got, tt.want, stdout.String(), stderr.String())
			}
			if got != exitOK && stderr.Len() == 0 {
				t.Errorf("exit code %d without a message on stderr", got)
			}
		})
	}
}
