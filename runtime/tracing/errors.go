package tracing

import (
	"log/slog"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel"
	"golang.org/x/time/rate"
)

// ErrorLogInterval is how often at most an OpenTelemetry error, such as
// a failed export to an unreachable receiver, is logged.
const ErrorLogInterval = 10 * time.Second

// LogErrors sends the errors of OpenTelemetry's SDK to log, as warnings,
// at most one every interval, each saying how many were left out before
// it. Without a handler the SDK writes each one to stderr in plain text,
// outside the structured log: an unreachable receiver gave a line every
// few tens of milliseconds. The handler is global to the process, as the
// SDK's is.
func LogErrors(log *slog.Logger, interval time.Duration) {
	otel.SetErrorHandler(newErrorLogger(log, interval))
}

// errorLogger is an otel.ErrorHandler that logs at a bounded rate.
type errorLogger struct {
	log       *slog.Logger
	sometimes *rate.Sometimes
	// left is how many errors were not logged since the last that was.
	left atomic.Int64
}

func newErrorLogger(log *slog.Logger, interval time.Duration) *errorLogger {
	return &errorLogger{log: log, sometimes: &rate.Sometimes{First: 1, Interval: interval}}
}

// Handle logs err, unless one was logged less than the interval ago.
func (l *errorLogger) Handle(err error) {
	logged := false
	l.sometimes.Do(func() {
		logged = true
		l.log.Warn("tracing: exporting spans failed; spans are dropped, events are not", "error", err, "not_logged_since", l.left.Swap(0))
	})
	if !logged {
		l.left.Add(1)
	}
}
