package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestAPanicIsAnInternalErrorWithExitCode2(t *testing.T) {
	beforeCommand = func([]string) { panic("planted") }
	defer func() { beforeCommand = nil }()
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), []string{"version"}, strings.NewReader(""), &stdout, &stderr)
	if code != exitTrouble {
		t.Errorf("exit code %d, want %d", code, exitTrouble)
	}
	if want := "knc: internal error: planted; please report it"; !strings.HasPrefix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to start with %q", stderr.String(), want)
	}
	if stdout.Len() > 0 {
		t.Errorf("stdout %q, want nothing", stdout.String())
	}
}
