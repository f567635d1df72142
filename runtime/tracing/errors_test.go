package tracing

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestErrorsAreLoggedAtABoundedRate: an unreachable receiver made the
// SDK print 124 plain-text lines to stderr in 8 s. Through the handler,
// a burst is one structured warning, and the next one says how many
// were left out.
func TestErrorsAreLoggedAtABoundedRate(t *testing.T) {
	var out bytes.Buffer
	l := newErrorLogger(slog.New(slog.NewJSONHandler(&out, nil)), time.Hour)
	for range 124 {
		l.Handle(errors.New("traces export: connection refused"))
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 1 {
		t.Fatalf("%d lines logged for 124 errors within the interval, want 1:\n%s", len(lines), out.String())
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("not a structured log line: %v: %s", err, lines[0])
	}
	delete(got, "time")
	want := map[string]any{
		"level":            "WARN",
		"msg":              "tracing: exporting spans failed; spans are dropped, events are not",
		"error":            "traces export: connection refused",
		"not_logged_since": float64(0),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log line (-want +got):\n%s", diff)
	}
	if l.left.Load() != 123 {
		t.Errorf("%d errors counted as left out, want 123", l.left.Load())
	}
}
