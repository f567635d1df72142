package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
)

type displayFlags struct {
	addr         string
	replyType    string
	replySource  string
	status       int
	maxBodyBytes int64
	count        int
}

func newDisplayCmd() *cobra.Command {
	var f displayFlags
	cmd := &cobra.Command{
		Use:   "display [--addr HOST:PORT]",
		Short: "Run a subscriber that prints the CloudEvents it receives",
		Long: `Display is a small event subscriber, like Knative's event_display: it
accepts CloudEvents over HTTP (binary or structured mode) at any path and
prints each one to standard output, context attributes, extensions and
data, answering 202 Accepted.

--reply-type T answers 200 with a reply event of type T carrying the same
data, which a Broker routes again and a Subscription sends to its reply.
--status N answers every event with status N instead, to try retries and
dead-letter sinks. A request that is not a valid CloudEvent gets 400 and is
reported on standard error.

Display prints its address on standard error once it listens, and stops
cleanly on SIGINT or SIGTERM, or after --count events.`,
		Example: `  # Print the events a Trigger delivers to http://127.0.0.1:9090/.
  knc display --addr 127.0.0.1:9090

  # Reply to every event with one of type com.example.checked.
  knc display --addr 127.0.0.1:9090 --reply-type com.example.checked

  # Fail every delivery, retryably, to watch a dead-letter sink fill up.
  knc display --addr 127.0.0.1:9091 --status 503

  # In a script: wait until three events have arrived.
  knc display --addr 127.0.0.1:9090 --count 3`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runDisplay(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.addr, "addr", "127.0.0.1:9090", "listen address `HOST:PORT` (port 0 picks a free one)")
	fl.StringVar(&f.replyType, "reply-type", "", "answer 200 with a reply event of this `TYPE`")
	fl.StringVar(&f.replySource, "reply-source", "/knc/display", "source of reply events")
	fl.IntVar(&f.status, "status", 0, "answer every event with this HTTP `STATUS` (default 202, or 200 with --reply-type)")
	fl.Int64Var(&f.maxBodyBytes, "max-body-bytes", 4<<20, "largest event body accepted; larger ones get 413")
	fl.IntVar(&f.count, "count", 0, "stop after printing `N` events (0: run until interrupted)")
	return cmd
}

func runDisplay(cmd *cobra.Command, f *displayFlags) error {
	if f.status != 0 && (f.status < 200 || f.status > 599) {
		return usageError("--status %d: want an HTTP status from 200 to 599", f.status)
	}
	if f.count < 0 {
		return usageError("--count %d: want 0 or more", f.count)
	}
	if f.replyType != "" && f.status != 0 && f.status != http.StatusOK {
		return usageError("--reply-type needs status 200: only a 200 response carries a reply")
	}
	ln, err := net.Listen("tcp", f.addr)
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	d := &displayHandler{flags: f, out: cmd.OutOrStdout(), errOut: cmd.ErrOrStderr(), done: make(chan struct{})}
	srv := &http.Server{Handler: d, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(cmd.ErrOrStderr(), "knc display: listening on http://%s/\n", ln.Addr())

	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	select {
	case err := <-served:
		return &exitError{code: exitFailed, err: err}
	case <-cmd.Context().Done():
	case <-d.done:
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		// A sender may hold a connection it opened but has not used; the
		// server counts such a connection as busy for five seconds. Every
		// request in flight has been answered by now, so close them all.
		if err := srv.Close(); err != nil {
			return &exitError{code: exitFailed, err: fmt.Errorf("stopping: %w", err)}
		}
	}
	if err := <-served; !errors.Is(err, http.ErrServerClosed) {
		return &exitError{code: exitFailed, err: err}
	}
	return nil
}

type displayHandler struct {
	flags       *displayFlags
	mu          sync.Mutex // keeps printed events whole
	out, errOut io.Writer
	printed     int
	done        chan struct{} // closed once --count events are printed
}

func (d *displayHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		if r.Method == http.MethodOptions {
			w.WriteHeader(http.StatusOK)
			return
		}
		http.Error(w, "CloudEvents are POSTed", http.StatusMethodNotAllowed)
		return
	}
	e, err := cehttp.ReadRequest(r, d.flags.maxBodyBytes)
	if err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, cehttp.ErrTooLarge) {
			code = http.StatusRequestEntityTooLarge
		}
		d.mu.Lock()
		fmt.Fprintf(d.errOut, "knc display: %s %s: %d: %v\n", r.Method, r.URL.Path, code, err)
		d.mu.Unlock()
		http.Error(w, err.Error(), code)
		return
	}
	status := http.StatusAccepted
	switch {
	case d.flags.status != 0:
		status = d.flags.status
	case d.flags.replyType != "":
		status = http.StatusOK
	}
	d.mu.Lock()
	fmt.Fprintf(d.errOut, "knc display: %s %s: %d\n", r.Method, r.URL.Path, status)
	printEvent(d.out, e)
	d.printed++
	if d.printed == d.flags.count {
		close(d.done)
	}
	d.mu.Unlock()

	if d.flags.replyType != "" {
		d.reply(w, r, e)
		return
	}
	w.WriteHeader(status)
}

// reply answers 200 with a new event carrying e's data.
func (d *displayHandler) reply(w http.ResponseWriter, r *http.Request, e *event.Event) {
	reply := event.New()
	reply.SetID(uuid.NewString())
	reply.SetType(d.flags.replyType)
	reply.SetSource(d.flags.replySource)
	reply.SetTime(time.Now().UTC())
	if ct := e.DataContentType(); ct != "" {
		reply.SetDataContentType(ct)
	}
	reply.DataEncoded = e.DataEncoded
	// The reply is written as a request would be, and its headers and body
	// copied into the response.
	req, err := cehttp.NewRequest(r.Context(), &reply, "http://reply.invalid/", routing.FormatBinary)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	for k, v := range req.Header {
		if k != "Prefer" {
			w.Header()[k] = v
		}
	}
	w.Header().Set("Content-Length", strconv.Itoa(len(reply.DataEncoded)))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, req.Body)
}

// printEvent writes e the way Knative's event_display does.
func printEvent(w io.Writer, e *event.Event) {
	fmt.Fprintf(w, "☁️  cloudevents.Event\n%s", e.String())
}
