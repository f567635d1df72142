package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRun(t *testing.T) {
	const dot = "digraph { a -> b }"
	tests := []struct {
		name       string
		args       []string
		stdin      string
		wantCode   int
		wantStdout string // a prefix
		wantStderr string
	}{
		{name: "svg", args: []string{"-T", "svg"}, stdin: dot, wantStdout: "<?xml"},
		{name: "svg by default", stdin: dot, wantStdout: "<?xml"},
		{name: "png", args: []string{"-T", "png"}, stdin: dot, wantStdout: "\x89PNG"},
		{name: "unknown format", args: []string{"-T", "gif"}, stdin: dot, wantCode: 2,
			wantStderr: "knc-draw: -T \"gif\": want svg or png\n"},
		{name: "a file argument", args: []string{"drawing.dot"}, stdin: dot, wantCode: 2,
			wantStderr: "knc-draw: unexpected argument \"drawing.dot\": the drawing is read from standard input\n"},
		{name: "larger than the limit", stdin: strings.Repeat("x", MaxInputBytes+1), wantCode: 1,
			wantStderr: "knc-draw: standard input: larger than the limit of 67108864 bytes; draw a part of the topology\n"},
		{name: "not DOT", stdin: "digraph {", wantCode: 1,
			wantStderr: "knc-draw: reading the DOT drawing:"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, strings.NewReader(tt.stdin), &stdout, &stderr)
			if code != tt.wantCode {
				t.Errorf("exit code %d, want %d; stderr: %s", code, tt.wantCode, stderr.String())
			}
			if !strings.HasPrefix(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout starts %q, want %q", head(stdout.String()), tt.wantStdout)
			}
			if tt.wantStdout == "" && stdout.Len() > 0 {
				t.Errorf("stdout has %d bytes, want none", stdout.Len())
			}
			got := stderr.String()
			if tt.wantStderr != "" && strings.HasSuffix(tt.wantStderr, ":") {
				got = got[:min(len(got), len(tt.wantStderr))]
			}
			if diff := cmp.Diff(tt.wantStderr, got); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

func head(s string) string { return s[:min(len(s), 16)] }
