package plugins

import (
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/runtimeconfig"
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
	data = map[string]string{runtimeconfig.Key("tracing-endpoint"): t.Endpoint}
	args = []string{"--tracing-endpoint", runtimeconfig.Ref("tracing-endpoint")}
	if t.Protocol != "" {
		data[runtimeconfig.Key("tracing-protocol")] = t.Protocol
		args = append(args, "--tracing-protocol", runtimeconfig.Ref("tracing-protocol"))
	}
	if t.Insecure {
		args = append(args, "--tracing-insecure")
	}
	if t.SamplingRatio != nil {
		data[runtimeconfig.Key("tracing-sampling-ratio")] = strconv.FormatFloat(*t.SamplingRatio, 'g', -1, 64)
		args = append(args, "--tracing-sampling-ratio", runtimeconfig.Ref("tracing-sampling-ratio"))
	}
	if len(t.Headers) > 0 {
		// --tracing-header reads NAME=VALUE pairs as one CSV record.
		var pairs []string
		for _, name := range slices.Sorted(maps.Keys(t.Headers)) {
			pairs = append(pairs, csvField(name+"="+t.Headers[name]))
		}
		data[runtimeconfig.Key("tracing-header")] = strings.Join(pairs, ",")
		args = append(args, "--tracing-header", runtimeconfig.Ref("tracing-header"))
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
