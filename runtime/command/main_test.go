package command

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestMainTakesTheOldArguments: the runtime's binary takes knc runtime's
// arguments, and, for the Deployments rendered before it, the same after
// the word runtime, saying that it is no longer needed.
func TestMainTakesTheOldArguments(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		out, notes string
	}{
		{[]string{"--help"}, ExitOK, "knc-runtime --table /etc/knc/routing/table.json", ""},
		{[]string{"runtime", "--help"}, ExitOK, "--table FILE", "is no longer needed"},
		{[]string{"--version"}, ExitOK, "knc-runtime ", ""},
		{[]string{"runtime", "--no-such-flag"}, ExitTrouble, "", "knc-runtime: unknown flag: --no-such-flag"},
		{[]string{"--log-level", "loud"}, ExitTrouble, "", `knc-runtime: --log-level "loud"`},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(context.Background(), tc.args, &stdout, &stderr)
			if code != tc.code || !strings.Contains(stdout.String(), tc.out) || !strings.Contains(stderr.String(), tc.notes) {
				t.Errorf("exit %d, want %d; stdout has %q: %t; stderr has %q: %t\nstderr:\n%s", code, tc.code, tc.out, strings.Contains(stdout.String(), tc.out), tc.notes, strings.Contains(stderr.String(), tc.notes), stderr.String())
			}
		})
	}
}
