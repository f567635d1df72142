package rig

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// DLQ runs `knc dlq SUBCOMMAND --admin ADMIN ARGS...` with the binary
// knc, the admin token in KNC_ADMIN_TOKEN, and returns its standard
// output; a failure ends the test with its standard error.
func DLQ(t testing.TB, knc, admin, token, subcommand string, args ...string) string {
	t.Helper()
	cmd := exec.Command(knc, append([]string{"dlq", subcommand, "--admin", admin}, args...)...)
	cmd.Env = append(os.Environ(), "KNC_ADMIN_TOKEN="+token)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := errors.AsType[*exec.ExitError](err); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("knc dlq %s %s: %v\n%s", subcommand, strings.Join(args, " "), err, stderr)
	}
	return string(out)
}
