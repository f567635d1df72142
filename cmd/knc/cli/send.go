package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
)

type sendFlags struct {
	to      string
	channel string
	addr    string
	event   eventFlags
	format  string
	timeout time.Duration
}

func newSendCmd() *cobra.Command {
	var f sendFlags
	cmd := &cobra.Command{
		Use:   "send --to URL|NAMESPACE/NAME --type TYPE --source SOURCE [flags]",
		Short: "Send one CloudEvent to a Broker, a Channel or any URL",
		Long: `Send posts one CloudEvent over HTTP, in binary mode unless --format json
asks for structured mode, and prints the response status.

--to takes a URL, or NAMESPACE/NAME for a Broker or a Channel served by
'knc run' at --addr: the Broker's address (ADDR/brokers/NAMESPACE/NAME) is
tried first, and the Channel's (ADDR/channels/NAMESPACE/NAME) when no
Broker has that name. --channel NAMESPACE/NAME sends to the Channel only,
for a Channel that shares its name with a Broker.

The event id defaults to a random UUID and its time (--time) to now. --data or
--data-file (- for standard input) gives the payload, sent byte for byte
with --content-type (application/json unless set); a payload file must be a
regular file, and a payload read is at most 16 MiB. If the response is a 200
carrying a reply event, the reply is printed after the status.

The exit code is 0 on a 2xx response, 1 on any other response or when the
target cannot be reached (the status and the response body go to stderr),
and 2 on a usage error.`,
		Example: `  # Send to the default Broker of namespace demo served by 'knc run'.
  knc send --to demo/default --type com.example.order.created --source /shop --data '{"id": 42}'

  # Send to a Channel, with an extension, in structured mode.
  knc send --channel demo/orders --type order --source /shop --extension tenant=acme --format json

  # Send a file to any CloudEvents endpoint.
  knc send --to http://127.0.0.1:9090/ --type image.added --source /camera --data-file cat.png --content-type image/png`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runSend(cmd, &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "target: a `URL`, or the NAMESPACE/NAME of a Broker or Channel served at --addr")
	fl.StringVar(&f.channel, "channel", "", "target: the Channel `NAMESPACE/NAME` served at --addr")
	fl.StringVar(&f.addr, "addr", "http://"+defaultRunAddr, "base `URL` of 'knc run' for the NAMESPACE/NAME forms")
	f.event.register(fl)
	fl.StringVar(&f.format, "format", routing.FormatBinary, "content mode: binary or json (structured)")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Second, "bound on the whole request")
	return cmd
}

// defaultRunAddr is where 'knc run' listens unless told otherwise.
const defaultRunAddr = "127.0.0.1:8080"

func runSend(cmd *cobra.Command, f *sendFlags) error {
	targets, err := sendTargets(f)
	if err != nil {
		return err
	}
	if f.format != routing.FormatBinary && f.format != routing.FormatJSON {
		return usageError("--format %q: want binary or json", f.format)
	}
	e, err := f.event.build(cmd)
	if err != nil {
		return err
	}
	ctx := cmd.Context()
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	var resp *http.Response
	for i, target := range targets {
		req, err := cehttp.NewRequest(ctx, e, target, f.format)
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		resp, err = client.Do(req)
		if err != nil {
			return &exitError{code: exitFailed, err: err}
		}
		defer resp.Body.Close()
		// A 404 took nothing: the name may be a Channel's rather than a
		// Broker's.
		if resp.StatusCode == http.StatusNotFound && i+1 < len(targets) {
			continue
		}
		break
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		msg := resp.Status
		if b := strings.TrimSpace(string(body)); b != "" {
			msg += ": " + b
		}
		if resp.StatusCode == http.StatusNotFound && len(targets) > 1 {
			msg = fmt.Sprintf("%s: no Broker or Channel %s is served at %s (tried %s)", resp.Status, f.to, f.addr, strings.Join(targets, " and "))
		}
		return &exitError{code: exitFailed, err: errors.New(msg)}
	}
	fmt.Fprintln(cmd.OutOrStdout(), resp.Status)
	reply, err := cehttp.ReadReply(resp, 16<<20)
	if err != nil {
		return &exitError{code: exitFailed, err: fmt.Errorf("reading the reply: %w", err)}
	}
	if reply != nil {
		printEvent(cmd.OutOrStdout(), reply)
	}
	return nil
}

// sendTargets works out the URLs to post to, in order, checking the
// target flags: one, or for --to NAMESPACE/NAME the Broker's address and
// then the Channel's, tried when the Broker's answers 404.
func sendTargets(f *sendFlags) ([]string, error) {
	switch {
	case f.to == "" && f.channel == "":
		return nil, usageError("a target is required: --to URL|NAMESPACE/NAME or --channel NAMESPACE/NAME")
	case f.to != "" && f.channel != "":
		return nil, usageError("--to and --channel exclude each other")
	}
	if strings.Contains(f.to, "://") {
		if err := checkHTTPURL(f.to); err != nil {
			return nil, usageError("--to %q: %v", f.to, err)
		}
		return []string{f.to}, nil
	}
	if err := checkHTTPURL(f.addr); err != nil {
		return nil, usageError("--addr %q: %v", f.addr, err)
	}
	kinds, flag, ref := []string{"brokers", "channels"}, "--to", f.to
	if f.channel != "" {
		kinds, flag, ref = []string{"channels"}, "--channel", f.channel
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return nil, usageError("%s %q: want a URL or NAMESPACE/NAME", flag, ref)
	}
	var out []string
	for _, kind := range kinds {
		out = append(out, strings.TrimSuffix(f.addr, "/")+"/"+kind+"/"+url.PathEscape(ns)+"/"+url.PathEscape(name))
	}
	return out, nil
}

func checkHTTPURL(s string) error {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return errors.New("want an http:// or https:// URL")
	}
	if u.Host == "" {
		return errors.New("no host")
	}
	return nil
}
