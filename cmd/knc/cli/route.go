package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/safeio"
	"github.com/knc-dev/knc/runtime/router"
)

type routeFlags struct {
	table  string
	broker string
	event  string
	// described is the event given as flags, as knc send takes it.
	described eventFlags
	output    string
	load      loadFlags
}

func newRouteCmd() *cobra.Command {
	var f routeFlags
	cmd := &cobra.Command{
		Use:   "route [PATH...] --broker NAMESPACE/NAME (--event FILE | --type TYPE --source SOURCE [flags])",
		Short: "Show which Triggers of a Broker an event would be delivered to, and why",
		Long: `Route evaluates one CloudEvent against every Trigger of a Broker, exactly as
the runtime does, and prints for each Trigger whether it matched and why: the
filter that decided (by its path in the Trigger, such as filters[1].not) and
the values it compared.

The Triggers come from manifests, compiled as 'knc build' compiles them
(PATH, the current directory by default), or from the routing table 'knc
build' writes (--table). The event is a structured-mode JSON CloudEvent
(--event; "-" reads it from stdin), or is described with the flags knc send
takes (--type, --source, --id, --subject, --time, --data, --data-file,
--content-type, --extension).

With -o text (the default) each Trigger gets one line:
NAMESPACE/NAME: matched|not matched: REASON. With -o json the output is
{"triggers":[{"namespace":...,"name":...,"matched":...,"reason":...}]}.

The exit code is 0 when the event could be evaluated, whether or not any
Trigger matched; 1 when the manifests, the table or the event are invalid
(manifests are reported as knc validate reports them); and 2 on a usage or
I/O error, such as a Broker that does not exist.`,
		Example: `  # Which Triggers of default/default in ./eventing receive this event?
  knc route eventing/ --broker default/default --event order.json

  # The same, from the table 'knc build' wrote.
  knc route --table build/routing-table.json --broker default/default --event order.json

  # The same event, described as knc send takes it.
  knc route eventing/ --broker default/default --type com.example.order.created --source /shop --extension amount=1200

  # The same, for a script.
  knc route --table build/routing-table.json --broker default/default --event order.json -o json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "text", "json"); err != nil {
				return err
			}
			described := f.described.given(cmd)
			switch {
			case f.broker == "" || (f.event == "" && !described):
				return usageError("route needs --broker NAMESPACE/NAME and an event: --event FILE, or --type and --source")
			case f.event != "" && described:
				return usageError("give the event either as --event FILE or as flags (--type, --source, ...), not both")
			}
			if f.table != "" && len(args) > 0 {
				return usageError("give either PATH arguments or --table, not both")
			}
			var table *routing.Table
			var err error
			if f.table != "" {
				table, err = readRouteTable(f.table)
			} else {
				table, _, err = compileTable(cmd.ErrOrStderr(), &f.load, &addressFlags{}, args)
			}
			if err != nil {
				return err
			}
			var e *event.Event
			if described {
				e, err = f.described.build(cmd)
			} else {
				e, err = readEvent(f.event, cmd.InOrStdin())
			}
			if err != nil {
				return err
			}
			verdicts, err := routeEvent(table, f.broker, e)
			if err != nil {
				return err
			}
			return printRoute(cmd.OutOrStdout(), f.output, f.broker, verdicts)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.table, "table", "", "routing table `FILE` written by knc build")
	fl.StringVar(&f.broker, "broker", "", "the Broker the event is sent to, as `NAMESPACE/NAME`")
	fl.StringVar(&f.event, "event", "", "structured-mode JSON CloudEvent `FILE`, or - for stdin")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text or json")
	f.described.register(fl)
	f.load.register(cmd)
	return cmd
}

// Limits of what route reads: a routing table of 10,000 Triggers takes a
// few MiB; an event is at most what an ingress accepts by default, with
// room to spare.
const (
	maxTableBytes = 256 << 20
	maxEventBytes = 16 << 20
)

func readRouteTable(path string) (*routing.Table, error) {
	b, err := safeio.ReadFile(path, maxTableBytes)
	if err != nil {
		return nil, &exitError{code: exitTrouble, err: err}
	}
	t, err := routing.Decode(b)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%s: %w", path, err)}
	}
	return t, nil
}

func readEvent(path string, stdin io.Reader) (*event.Event, error) {
	var (
		b   []byte
		err error
	)
	if path == "-" {
		b, err = safeio.ReadAll(stdin, "standard input", maxEventBytes)
	} else {
		b, err = safeio.ReadFile(path, maxEventBytes)
	}
	if err != nil {
		return nil, &exitError{code: exitTrouble, err: err}
	}
	e := event.New()
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%s: not a structured-mode JSON CloudEvent: %w", path, err)}
	}
	if err := e.Validate(); err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("%s: invalid CloudEvent: %w", path, err)}
	}
	return &e, nil
}

// routedTrigger is one Trigger's verdict, as -o json prints it.
type routedTrigger struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	Matched   bool   `json:"matched"`
	Reason    string `json:"reason"`
}

// routeEvent evaluates e against every Trigger of broker ("NAMESPACE/NAME")
// in table. It takes the table itself so that it serves a table read from a
// file and one compiled from manifests alike.
func routeEvent(table *routing.Table, broker string, e *event.Event) ([]routedTrigger, error) {
	var b *routing.Broker
	for i := range table.Brokers {
		if table.Brokers[i].Key() == broker {
			b = &table.Brokers[i]
			break
		}
	}
	if b == nil {
		known := make([]string, 0, len(table.Brokers))
		for i := range table.Brokers {
			known = append(known, table.Brokers[i].Key())
		}
		if len(known) == 0 {
			return nil, usageError("broker %q is not in the routing table, which has no brokers", broker)
		}
		return nil, usageError("broker %q is not in the routing table; it has %s", broker, strings.Join(known, ", "))
	}
	m, err := router.Compile(b.Triggers)
	if err != nil {
		return nil, &exitError{code: exitFailed, err: fmt.Errorf("broker %s: %w", broker, err)}
	}
	verdicts := m.Explain(e)
	routed := make([]routedTrigger, len(verdicts))
	for i, v := range verdicts {
		t := &b.Triggers[v.Index]
		routed[i] = routedTrigger{Namespace: t.Namespace, Name: t.Name, Matched: v.Matched, Reason: v.Reason}
	}
	return routed, nil
}

func printRoute(w io.Writer, output, broker string, routed []routedTrigger) error {
	var err error
	if output == "json" {
		if routed == nil {
			routed = []routedTrigger{}
		}
		err = writeJSON(w, struct {
			Triggers []routedTrigger `json:"triggers"`
		}{routed})
	} else {
		if len(routed) == 0 {
			_, err = fmt.Fprintf(w, "broker %s has no triggers\n", broker)
		}
		for _, r := range routed {
			verdict := "not matched"
			if r.Matched {
				verdict = "matched"
			}
			_, werr := fmt.Fprintf(w, "%s/%s: %s: %s\n", r.Namespace, r.Name, verdict, r.Reason)
			err = errors.Join(err, werr)
		}
	}
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	return nil
}
