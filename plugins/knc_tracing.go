package plugins

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/compiler/project"
)

// tracingConfig turns runtime.tracing into entries of the runtime's
// ConfigMap and the flags of knc runtime that read them through $(VAR):
// a change of the settings changes the ConfigMap's name and so rolls the
// pods. Without runtime.tracing there is neither, and the runtime exports
// spans only if its environment names an OTLP endpoint.
func tracingConfig(t *project.Tracing) (data map[string]string, args []string) {
	if t == nil || t.Endpoint == "" {
		return nil, nil
	}
	data = map[string]string{"KNC_TRACING_ENDPOINT": t.Endpoint}
	args = []string{"--tracing-endpoint", "$(KNC_TRACING_ENDPOINT)"}
	if t.Protocol != "" {
		data["KNC_TRACING_PROTOCOL"] = t.Protocol
		args = append(args, "--tracing-protocol", "$(KNC_TRACING_PROTOCOL)")
	}
	if t.Insecure {
		args = append(args, "--tracing-insecure")
	}
	if t.SamplingRatio != nil {
		data["KNC_TRACING_SAMPLING_RATIO"] = strconv.FormatFloat(*t.SamplingRatio, 'g', -1, 64)
		args = append(args, "--tracing-sampling-ratio", "$(KNC_TRACING_SAMPLING_RATIO)")
	}
	if len(t.Headers) > 0 {
		// --tracing-header reads NAME=VALUE pairs as one CSV record.
		var pairs []string
		for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
			pairs = append(pairs, csvField(name+"="+t.Headers[name]))
		}
		data["KNC_TRACING_HEADERS"] = strings.Join(pairs, ",")
		args = append(args, "--tracing-header", "$(KNC_TRACING_HEADERS)")
	}
	return data, args
}

// csvField quotes s as a field of a CSV record when it needs it.
func csvField(s string) string {
	if !strings.ContainsAny(s, ",\"\r\n") {
		return s
	}
	return `"` + strings.ReplaceAll(s, `"`, `""`) + `"`
}
