package cli

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/internal/safeio"
	"github.com/knc-dev/knc/runtime/kept"
)

// envAdminToken carries the token of the kept-letter API, so that it is
// not in the process's arguments.
const envAdminToken = "KNC_ADMIN_TOKEN"

// defaultAdminURL is where knc runtime serves its admin listener unless
// --admin-addr says otherwise.
const defaultAdminURL = "http://127.0.0.1:9090"

// maxAdminTokenFileBytes bounds --token-file: a token or a few.
const maxAdminTokenFileBytes = 1 << 20

// dlqFlags are the flags of knc dlq and its subcommands.
type dlqFlags struct {
	admin     string
	tokenFile string
	timeout   time.Duration

	namespace    string
	trigger      string
	subscription string
	eventType    string
	source       string
	reason       string
	since        string
	until        string
	all          bool

	output   string
	to       string
	rate     float64
	dryRun   bool
	force    bool
	resetTTL bool
}

func newDlqCmd() *cobra.Command {
	var f dlqFlags
	cmd := &cobra.Command{
		Use:   "dlq",
		Short: "List, show, replay and purge the deliveries a runtime kept because they failed",
		Long: `A delivery that ends without success (retries exhausted or a
non-retryable answer with no dead-letter sink, or a dead-letter sink that
refused it too) is kept by the runtime, per namespace, for --kept-max-age
and within --kept-max-bytes. knc dlq reads and replays those kept letters
through the runtime's admin listener (--admin-addr of knc run and knc
runtime), never its ingress listener.

The admin listener takes the tokens of the file admin of the runtime's
--bearer-tokens directory; give one with $` + envAdminToken + ` or
--token-file. A runtime without that file serves only clients on its own
host (knc run on a workstation, or kubectl port-forward to the pod).`,
		Example: `  # What failed in namespace shop in the last hour, and why.
  knc dlq list -n shop --since 1h

  # Everything about one letter, its data included.
  knc dlq show shop/42

  # The subscriber is fixed: send its letters again, 20 a second.
  knc dlq replay -n shop --trigger orders --rate 20

  # Forget what was replayed.
  knc dlq purge -n shop --trigger orders`,
		Args: cobra.NoArgs,
	}
	pf := cmd.PersistentFlags()
	pf.StringVar(&f.admin, "admin", defaultAdminURL, "base `URL` of the runtime's admin listener")
	pf.StringVar(&f.tokenFile, "token-file", "", "`FILE` holding a token of the admin listener (default: $"+envAdminToken+")")
	pf.DurationVar(&f.timeout, "timeout", 5*time.Minute, "how long to wait for the runtime's answer")
	cmd.AddCommand(newDlqListCmd(&f), newDlqShowCmd(&f), newDlqReplayCmd(&f), newDlqPurgeCmd(&f))
	return cmd
}

// filterFlags registers the flags that select letters.
func (f *dlqFlags) filterFlags(cmd *cobra.Command, selecting bool) {
	fl := cmd.Flags()
	fl.StringVarP(&f.namespace, "namespace", "n", "", "letters of `NAMESPACE` only")
	fl.StringVar(&f.trigger, "trigger", "", "letters of the Trigger `NAME` only")
	fl.StringVar(&f.subscription, "subscription", "", "letters of the Subscription `NAME` only")
	fl.StringVar(&f.eventType, "type", "", "letters whose CloudEvent type is `TYPE` only")
	fl.StringVar(&f.source, "source", "", "letters whose CloudEvent source is `SOURCE` only")
	fl.StringVar(&f.reason, "reason", "", "letters kept for `REASON` only: "+strings.Join(kept.Reasons, ", "))
	fl.StringVar(&f.since, "since", "", "letters kept since `WHEN`: a duration ago (1h) or an RFC 3339 time")
	fl.StringVar(&f.until, "until", "", "letters kept until `WHEN`: a duration ago or an RFC 3339 time")
	if selecting {
		fl.BoolVar(&f.all, "all", false, "every letter, when no ID nor filter is given")
	}
}

// filter is the Filter of the flags and letter IDs.
func (f *dlqFlags) filter(ids []string, now time.Time) (kept.Filter, error) {
	if f.trigger != "" && f.subscription != "" {
		return kept.Filter{}, usageError("--trigger and --subscription select different kinds of letters: give one")
	}
	if f.reason != "" && !slices.Contains(kept.Reasons, f.reason) {
		return kept.Filter{}, usageError("--reason %q: letters are kept for %s", f.reason, strings.Join(kept.Reasons, ", "))
	}
	out := kept.Filter{Namespace: f.namespace, Type: f.eventType, Source: f.source, Reason: f.reason, IDs: ids}
	switch {
	case f.trigger != "":
		out.TargetKind, out.Target = "Trigger", f.trigger
	case f.subscription != "":
		out.TargetKind, out.Target = "Subscription", f.subscription
	}
	for _, id := range ids {
		if _, _, err := kept.ParseID(id); err != nil {
			return kept.Filter{}, usageError("%v", err)
		}
	}
	var err error
	if out.Since, err = when("--since", f.since, now); err != nil {
		return kept.Filter{}, err
	}
	if out.Until, err = when("--until", f.until, now); err != nil {
		return kept.Filter{}, err
	}
	return out, nil
}

// selects reports whether f narrows the letters down at all.
func selects(f kept.Filter) bool {
	return f.Namespace != "" || f.Target != "" || f.Type != "" || f.Source != "" || f.Reason != "" ||
		!f.Since.IsZero() || !f.Until.IsZero() || len(f.IDs) > 0
}

// when reads a time flag: a duration before now, or an RFC 3339 time.
func when(flag, v string, now time.Time) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(v); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usageError("%s %q: give a duration ago (30m, 2h) or an RFC 3339 time (2026-01-02T15:04:05Z)", flag, v)
	}
	return t, nil
}

func newDlqListCmd(f *dlqFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "list [flags]",
		Short: "List kept letters, oldest first",
		Long: `List prints the kept letters the filters select, oldest first: their ID
(NAMESPACE/NUMBER), when they were kept and why, their Trigger or
Subscription, the last answer (status, or the error when there was none),
the CloudEvent's type and id, and when they were last replayed. Event
data is never listed; knc dlq show prints it.`,
		Example: `  knc dlq list
  knc dlq list -n shop --trigger orders --reason no-dead-letter-sink
  knc dlq list --type com.example.order.created --since 2h -o json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			flt, err := f.filter(nil, time.Now())
			if err != nil {
				return err
			}
			if f.output != "text" && f.output != "json" {
				return usageError("--output must be text or json, not %q", f.output)
			}
			var res kept.ListResult
			if err := f.call(cmd.Context(), http.MethodGet, kept.PathLetters+"?"+flt.Query().Encode(), nil, &res); err != nil {
				return err
			}
			if f.output == "json" {
				return writeJSON(cmd.OutOrStdout(), res)
			}
			return printLetters(cmd.OutOrStdout(), res.Letters)
		},
	}
	f.filterFlags(cmd, false)
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func printLetters(w io.Writer, letters []kept.Letter) error {
	if len(letters) == 0 {
		_, err := fmt.Fprintln(w, "no kept letters")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKEPT\tREASON\tTARGET\tANSWER\tATTEMPTS\tTYPE\tEVENT ID\tREPLAYED")
	for _, l := range letters {
		replayed := "-"
		if !l.ReplayedAt.IsZero() {
			replayed = l.ReplayedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%d\t%s\t%s\t%s\n", l.ID, l.KeptAt.Format(time.RFC3339), l.Reason,
			strings.ToLower(l.TargetKind), l.Target, answerOf(l), l.Attempts, l.Event.Type, l.Event.ID, replayed)
	}
	return tw.Flush()
}

// answerOf is the last answer of a letter in a few words.
func answerOf(l kept.Letter) string {
	if l.Status != 0 {
		return fmt.Sprint(l.Status)
	}
	if l.Error == "" {
		return "-"
	}
	e := l.Error
	if len(e) > 40 {
		e = e[:37] + "..."
	}
	return fmt.Sprintf("%q", e)
}

func newDlqShowCmd(f *dlqFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "show ID",
		Short: "Show one kept letter: attributes, headers, data and why it failed",
		Long: `Show prints everything kept of one letter: its destination, the last
answer and error, the knativeerror* values a dead-letter sink would have
seen, the attempts, the CloudEvent's attributes and pass-through headers,
and its data (as text when it is UTF-8, else in base64).`,
		Example: `  knc dlq show shop/42
  knc dlq show shop/42 -o json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if _, _, err := kept.ParseID(args[0]); err != nil {
				return usageError("%v", err)
			}
			if f.output != "text" && f.output != "json" {
				return usageError("--output must be text or json, not %q", f.output)
			}
			var l kept.Letter
			if err := f.call(cmd.Context(), http.MethodGet, kept.PathLetters+"/"+args[0], nil, &l); err != nil {
				return err
			}
			if f.output == "json" {
				return writeJSON(cmd.OutOrStdout(), l)
			}
			return printLetter(cmd.OutOrStdout(), l)
		},
	}
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	return cmd
}

func printLetter(w io.Writer, l kept.Letter) error {
	var b bytes.Buffer
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-14s %s\n", k+":", v)
		}
	}
	line("ID", l.ID)
	line("Reason", l.Reason)
	if l.SourceKind == "channel" {
		line("Channel", l.Source)
	} else {
		line("Broker", l.Source)
	}
	line(l.TargetKind, l.Target)
	line("Destination", l.Destination)
	if l.Status != 0 {
		line("Status", fmt.Sprint(l.Status))
	}
	line("Error", l.Error)
	line("Attempts", fmt.Sprint(l.Attempts))
	if !l.AcceptedAt.IsZero() {
		line("Accepted", l.AcceptedAt.Format(time.RFC3339Nano))
	}
	line("Kept", l.KeptAt.Format(time.RFC3339Nano))
	if !l.ReplayedAt.IsZero() {
		line("Replayed", l.ReplayedAt.Format(time.RFC3339Nano))
	}
	for _, k := range slices.Sorted(maps.Keys(l.KnativeError)) {
		line(k, l.KnativeError[k])
	}
	fmt.Fprintln(&b, "Event:")
	line("  id", l.Event.ID)
	line("  type", l.Event.Type)
	line("  source", l.Event.Source)
	line("  subject", l.Event.Subject)
	line("  time", l.Event.Time)
	line("  content type", l.Event.ContentType)
	for _, k := range slices.Sorted(maps.Keys(l.Event.Extensions)) {
		line("  "+k, l.Event.Extensions[k])
	}
	if len(l.Headers) > 0 {
		fmt.Fprintln(&b, "Headers:")
		for _, k := range slices.Sorted(maps.Keys(l.Headers)) {
			line("  "+k, strings.Join(l.Headers[k], ", "))
		}
	}
	if l.Data != "" {
		data, err := base64.StdEncoding.DecodeString(l.Data)
		fmt.Fprintln(&b, "Data:")
		if err == nil && isText(data) {
			b.Write(data)
			if !bytes.HasSuffix(data, []byte("\n")) {
				b.WriteByte('\n')
			}
		} else {
			fmt.Fprintf(&b, "(base64) %s\n", l.Data)
		}
	}
	_, err := w.Write(b.Bytes())
	return err
}

func isText(b []byte) bool {
	for _, r := range string(b) {
		if r == '\uFFFD' || (r < ' ' && r != '\n' && r != '\r' && r != '\t') {
			return false
		}
	}
	return true
}

func newDlqReplayCmd(f *dlqFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "replay [ID...] [flags]",
		Short: "Send kept letters again, to their own Trigger or Subscription or to --to",
		Long: `Replay sends the letters given by ID, or selected by the filters, again:
each to the Trigger or Subscription it was for, and to no other Trigger of
its Broker, as a new delivery with that target's retries and timeout; or
once to --to URL. The CloudEvent keeps its id, so that a subscriber that
deduplicates sees a retry.

A letter stays kept, marked replayed; replaying it again does nothing
unless --force. A delivery that fails again is kept again, as a new
letter. --reset-ttl gives the events a fresh knativebrokerttl. --dry-run
prints what would be replayed. Give IDs, a filter, or --all.`,
		Example: `  # Dry run first: what would go out?
  knc dlq replay -n shop --trigger orders --dry-run

  # Then replay, 20 events a second.
  knc dlq replay -n shop --trigger orders --rate 20

  # One letter, to a service for inspection instead.
  knc dlq replay shop/42 --to http://127.0.0.1:8000/`,
		RunE: func(cmd *cobra.Command, args []string) error {
			flt, err := f.filter(args, time.Now())
			if err != nil {
				return err
			}
			if !selects(flt) && !f.all {
				return usageError("give letter IDs, a filter (--namespace, --trigger, --type, ...) or --all")
			}
			if f.rate < 0 {
				return usageError("--rate must be 0 (no bound) or above, not %v", f.rate)
			}
			if f.to != "" {
				if u, err := url.Parse(f.to); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
					return usageError("--to %q: give an http:// or https:// URL", f.to)
				}
			}
			req := kept.ReplayRequest{Filter: flt, To: f.to, PerSecond: f.rate, DryRun: f.dryRun, Force: f.force, ResetTTL: f.resetTTL}
			var res kept.ReplayResult
			if err := f.call(cmd.Context(), http.MethodPost, kept.PathReplay, req, &res); err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			verb := "replayed"
			if res.DryRun {
				verb = "would replay"
			}
			for _, id := range res.Replayed {
				fmt.Fprintf(out, "%s %s\n", verb, id)
			}
			for _, s := range res.Skipped {
				fmt.Fprintf(out, "skipped %s: %s\n", s.ID, s.Why)
			}
			fmt.Fprintf(out, "%s %d, skipped %d\n", verb, len(res.Replayed), len(res.Skipped))
			return nil
		},
	}
	f.filterFlags(cmd, true)
	fl := cmd.Flags()
	fl.StringVar(&f.to, "to", "", "send each event once to `URL` instead of its Trigger or Subscription")
	fl.Float64Var(&f.rate, "rate", 50, "letters replayed per second at most (0: no bound)")
	fl.BoolVar(&f.dryRun, "dry-run", false, "print what would be replayed, replay nothing")
	fl.BoolVar(&f.force, "force", false, "replay letters that were replayed before")
	fl.BoolVar(&f.resetTTL, "reset-ttl", false, "give each event a fresh knativebrokerttl")
	return cmd
}

func newDlqPurgeCmd(f *dlqFlags) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "purge [ID...] [flags]",
		Short: "Delete kept letters",
		Long: `Purge deletes the letters given by ID, or selected by the filters, and
counts them in knc_kept_letters_purged_total. Give IDs, a filter, or
--all; --dry-run prints what would be deleted.`,
		Example: `  knc dlq purge shop/42
  knc dlq purge -n shop --until 24h --dry-run`,
		RunE: func(cmd *cobra.Command, args []string) error {
			flt, err := f.filter(args, time.Now())
			if err != nil {
				return err
			}
			if !selects(flt) && !f.all {
				return usageError("give letter IDs, a filter (--namespace, --trigger, --type, ...) or --all")
			}
			var res kept.PurgeResult
			if err := f.call(cmd.Context(), http.MethodPost, kept.PathPurge, kept.PurgeRequest{Filter: flt, DryRun: f.dryRun}, &res); err != nil {
				return err
			}
			verb := "purged"
			if res.DryRun {
				verb = "would purge"
			}
			for _, id := range res.Purged {
				fmt.Fprintf(cmd.OutOrStdout(), "%s %s\n", verb, id)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %d\n", verb, len(res.Purged))
			return nil
		},
	}
	f.filterFlags(cmd, true)
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "print what would be purged, delete nothing")
	return cmd
}

// token is the bearer token of the admin listener, "" for none.
func (f *dlqFlags) token() (string, error) {
	if f.tokenFile != "" {
		b, err := safeio.ReadFile(f.tokenFile, maxAdminTokenFileBytes)
		if err != nil {
			return "", fmt.Errorf("--token-file: %w", err)
		}
		tok, _, _ := strings.Cut(strings.TrimSpace(string(b)), "\n")
		return strings.TrimSpace(tok), nil
	}
	return strings.TrimSpace(os.Getenv(envAdminToken)), nil
}

// call makes one request of the kept-letter API and decodes its answer.
func (f *dlqFlags) call(ctx context.Context, method, path string, in, out any) error {
	base, err := url.Parse(f.admin)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return usageError("--admin %q: give the http:// URL of the runtime's admin listener", f.admin)
	}
	tok, err := f.token()
	if err != nil {
		return err
	}
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	target := strings.TrimSuffix(f.admin, "/") + path
	req, err := http.NewRequestWithContext(ctx, method, target, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("reaching the runtime's admin listener: %w (is the runtime running with --admin-addr, and --admin its URL?)", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return fmt.Errorf("reading the runtime's answer: %w", err)
	}
	switch {
	case resp.StatusCode == http.StatusUnauthorized:
		return fmt.Errorf("%s %s: 401: %s (give a token of the runtime's admin file with $%s or --token-file)", method, path, strings.TrimSpace(string(b)), envAdminToken)
	case resp.StatusCode == http.StatusForbidden:
		return fmt.Errorf("%s %s: 403: %s", method, path, strings.TrimSpace(string(b)))
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("%s %s: %d: %s", method, path, resp.StatusCode, strings.TrimSpace(string(b)))
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("reading the runtime's answer to %s %s: %w", method, path, err)
	}
	return nil
}
