package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/runtime/command"
)

// Exit codes shared by every command.
const (
	exitOK      = 0
	exitFailed  = 1 // invalid input, or differences found
	exitTrouble = 2 // usage or I/O errors
)

// exitError carries an exit code out of a command. Its message, if any, has
// already been printed (or needs none), so Main does not print it again.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit status %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// silentExit ends a command with code after it has reported its own errors.
func silentExit(code int) error { return &exitError{code: code} }

// usageError is reported on stderr with exit code 2.
func usageError(format string, args ...any) error {
	return &exitError{code: exitTrouble, err: fmt.Errorf(format, args...)}
}

// Main runs knc with os.Args and returns the process exit code.
func Main() int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
}

// beforeCommand, when set (by tests only), runs inside the command
// boundary before the command.
var beforeCommand func(args []string)

func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) (code int) {
	// A panic is a bug in knc, not a problem with the input: it ends as
	// a usage or I/O error does, with a line asking for a report rather
	// than a stack trace.
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "knc: internal error: %v; please report it at https://github.com/knc-dev/knc/issues with the command and its input\n", r)
			code = exitTrouble
		}
	}()
	if beforeCommand != nil {
		beforeCommand(args)
	}
	root := newRootCmd()
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	err := root.ExecuteContext(ctx)
	// knc's own exit errors end as knc runtime's, shared with the
	// runtime's own binary, do.
	var ee *exitError
	if errors.As(err, &ee) {
		err = &command.ExitError{Code: ee.code, Err: ee.err}
	}
	return command.Report(stderr, "knc", err)
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "knc",
		Short: "knc compiles Knative Eventing manifests for GitOps and runs them",
		Long: `knc is a declarative GitOps compiler for Knative Eventing.

It validates Broker, Trigger, Channel and Subscription manifests before they
are merged, compiles them into a kustomize directory that Flux or Argo CD
applies, shows what a change will do, and runs the compiled routes on an
embedded NATS JetStream server.`,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	registerGlobalFlags(root)
	root.AddCommand(
		newVersionCmd(),
		newSendCmd(),
		newDlqCmd(),
		newDisplayCmd(),
		newValidateCmd(),
		newRunCmd(),
		newRouteCmd(),
		newBuildCmd(),
		newSchemaCmd(),
		command.NewCommand("runtime"),
		newGraphCmd(),
		newDiffCmd(),
		newStatusCmd(),
		newTestCmd(),
	)
	return root
}
