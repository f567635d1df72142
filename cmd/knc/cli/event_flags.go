package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/uuid"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/knc-dev/knc/internal/safeio"
)

// eventFlags describe one CloudEvent on the command line, for knc send and
// knc route alike.
type eventFlags struct {
	eventType   string
	source      string
	id          string
	subject     string
	time        string
	data        string
	dataFile    string
	contentType string
	extensions  []string
}

// eventFlagNames are the flags register adds.
var eventFlagNames = []string{"type", "source", "id", "subject", "time", "data", "data-file", "content-type", "extension"}

func (f *eventFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.eventType, "type", "", "event type (required)")
	fl.StringVar(&f.source, "source", "", "event source, a URI-reference (required)")
	fl.StringVar(&f.id, "id", "", "event id (default: a random UUID)")
	fl.StringVar(&f.subject, "subject", "", "event subject")
	fl.StringVar(&f.time, "time", "", "event time, RFC 3339 (default: now)")
	fl.StringVar(&f.data, "data", "", "payload `STRING`")
	fl.StringVar(&f.dataFile, "data-file", "", "read the payload from `FILE` (- for standard input)")
	fl.StringVar(&f.contentType, "content-type", "application/json", "media type of the payload (datacontenttype)")
	fl.StringArrayVar(&f.extensions, "extension", nil, "extension attribute `NAME=VALUE` (repeatable)")
}

// given reports whether any of the event flags was set.
func (f *eventFlags) given(cmd *cobra.Command) bool {
	return slices.ContainsFunc(eventFlagNames, cmd.Flags().Changed)
}

// build makes the event the flags describe.
func (f *eventFlags) build(cmd *cobra.Command) (*event.Event, error) {
	switch {
	case f.eventType == "":
		return nil, usageError("--type is required")
	case f.source == "":
		return nil, usageError("--source is required")
	case f.data != "" && f.dataFile != "":
		return nil, usageError("--data and --data-file exclude each other")
	}
	src := types.ParseURIRef(f.source)
	if src == nil {
		return nil, usageError("--source %q is not a URI-reference", f.source)
	}
	id := f.id
	if id == "" {
		id = uuid.NewString()
	}
	when := time.Now().UTC()
	if f.time != "" {
		t, err := time.Parse(time.RFC3339Nano, f.time)
		if err != nil {
			return nil, usageError("--time %q: want an RFC 3339 time such as 2024-05-06T07:08:09Z", f.time)
		}
		when = t
	}
	ec := &event.EventContextV1{
		ID: id, Source: *src, Type: f.eventType,
		Time: &types.Timestamp{Time: when},
	}
	if f.subject != "" {
		ec.Subject = &f.subject
	}
	for _, kv := range f.extensions {
		name, value, ok := strings.Cut(kv, "=")
		if !ok {
			return nil, usageError("--extension %q: want NAME=VALUE", kv)
		}
		if err := checkExtensionName(name); err != nil {
			return nil, usageError("--extension %q: %v", kv, err)
		}
		if ec.Extensions == nil {
			ec.Extensions = make(map[string]any)
		}
		ec.Extensions[name] = value
	}
	e := &event.Event{Context: ec}
	data := []byte(f.data)
	switch f.dataFile {
	case "":
	case "-":
		// Bounded as route bounds an event, so that a pipe that never
		// ends does not fill the memory.
		b, err := safeio.ReadAll(cmd.InOrStdin(), "standard input", maxEventBytes)
		if err != nil {
			return nil, usageError("--data-file: %v", err)
		}
		data = b
	default:
		b, err := safeio.ReadFile(f.dataFile, maxEventBytes)
		if err != nil {
			return nil, usageError("--data-file: %v", err)
		}
		data = b
	}
	if len(data) > 0 {
		e.DataEncoded = data
	}
	if len(data) > 0 || cmd.Flags().Changed("content-type") {
		ct := f.contentType
		ec.DataContentType = &ct
	}
	if err := e.Validate(); err != nil {
		return nil, usageError("invalid event: %s", strings.TrimSpace(strings.ReplaceAll(err.Error(), "\n", "; ")))
	}
	return e, nil
}

// contextAttributes cannot be set as extensions.
var contextAttributes = []string{"id", "source", "type", "specversion", "datacontenttype", "dataschema", "subject", "time"}

func checkExtensionName(name string) error {
	if name == "" {
		return errors.New("empty name")
	}
	for _, c := range name {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') {
			return errors.New("attribute names are lower-case ASCII letters and digits")
		}
	}
	if slices.Contains(contextAttributes, name) {
		return fmt.Errorf("%s is a context attribute; use its own flag", name)
	}
	return nil
}
