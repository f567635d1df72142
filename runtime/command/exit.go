package command

import (
	"errors"
	"fmt"
	"io"
)

// Exit codes of knc runtime, which are those of every knc command.
const (
	ExitOK      = 0
	ExitFailed  = 1 // an invalid table, or the runtime failed
	ExitTrouble = 2 // usage or I/O errors
)

// ExitError carries an exit code out of a command, with the error to
// print, if any.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit status %d", e.Code)
	}
	return e.Err.Error()
}

func (e *ExitError) Unwrap() error { return e.Err }

// UsageError is reported on stderr with exit code 2.
func UsageError(format string, args ...any) error {
	return &ExitError{Code: ExitTrouble, Err: fmt.Errorf(format, args...)}
}

// Report ends a command of the binary name: it prints err, if any, on
// stderr and returns the exit code. An ExitError carries its code; any
// other error (cobra's unknown flags, wrong argument counts) is a usage
// error.
func Report(stderr io.Writer, name string, err error) int {
	if err == nil {
		return ExitOK
	}
	var ee *ExitError
	if errors.As(err, &ee) {
		if ee.Err != nil {
			fmt.Fprintf(stderr, "%s: %v\n", name, ee.Err)
		}
		return ee.Code
	}
	fmt.Fprintf(stderr, "%s: %v\n", name, err)
	return ExitTrouble
}
