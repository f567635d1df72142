package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/routing"
)

// A reload whose CUE evaluation goes over its limits ends the runtime: the
// evaluation cannot be stopped, and would take the memory of a runtime
// that serves on. (No CUE runs here: the load reports the error itself.)
func TestReloadOverCUELimitsExits(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	hup := make(chan os.Signal, 1)
	hup <- syscall.SIGHUP
	exceeded := &cuelimit.Exceeded{Task: cuelimit.Task{Name: "evaluation of CUE manifest boom.cue", Subject: "the file"}, Timeout: time.Second}
	load := func() (*routing.Table, error) { return nil, fmt.Errorf("loading: %w", exceeded) }
	err := waitRun(context.Background(), nil, load, hup, make(chan error), log)
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != exitFailed || !errors.Is(err, exceeded) {
		t.Fatalf("waitRun = %v; want exit %d with the evaluation's error", err, exitFailed)
	}
	if !strings.Contains(logs.String(), "cannot be stopped; exiting") {
		t.Errorf("log:\n%s\nwant it to say the runtime exits", logs.String())
	}
}

// Any other failed reload keeps the previous table in force.
func TestFailedReloadKeepsServing(t *testing.T) {
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	hup := make(chan os.Signal, 1)
	hup <- syscall.SIGHUP
	runErr := make(chan error, 1)
	load := func() (*routing.Table, error) {
		runErr <- nil // the runtime ends once the reload has failed
		return nil, errors.New("broken manifests")
	}
	if err := waitRun(context.Background(), nil, load, hup, runErr, log); err != nil {
		t.Fatalf("waitRun = %v; want nil once the runtime ends", err)
	}
	if !strings.Contains(logs.String(), "the previous routing table stays in force") {
		t.Errorf("log:\n%s\nwant the failed reload", logs.String())
	}
}
