package tracing

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"sort"
	"strings"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"

	"github.com/knc-dev/knc/internal/redact"
)

// Protocols of the OTLP exporter.
const (
	ProtocolGRPC = "grpc"
	ProtocolHTTP = "http"
)

// DefaultServiceName is the service.name of the runtime's spans unless
// OTEL_SERVICE_NAME or OTEL_RESOURCE_ATTRIBUTES name another.
const DefaultServiceName = "knc-runtime"

// Config says where spans are exported. The zero Config exports nothing
// unless the standard OTEL_EXPORTER_OTLP_* environment variables name an
// endpoint; fields that are set take precedence over the environment.
type Config struct {
	// Endpoint is the OTLP receiver: a URL (http:// sends without TLS,
	// https:// with it) or HOST:PORT. Over HTTP, a URL without a path
	// gets /v1/traces.
	Endpoint string
	// Protocol is ProtocolGRPC or ProtocolHTTP (OTLP/HTTP with protobuf);
	// "" takes OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or
	// OTEL_EXPORTER_OTLP_PROTOCOL, else HTTP, the OTLP default.
	Protocol string
	// Insecure sends without TLS to an Endpoint given as HOST:PORT.
	Insecure bool
	// Headers are sent with every export, for a receiver that wants a key.
	Headers map[string]string
	// SamplingRatio, when set, is the share of traces started here that
	// are sampled, between 0 and 1; a span with a parent follows its
	// parent's decision. Unset, OTEL_TRACES_SAMPLER applies, else every
	// trace is sampled.
	SamplingRatio *float64
}

// Environment variables of the OTLP exporters that turn tracing on.
var endpointEnv = []string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT"}

// Enabled reports whether c, or the environment, names an endpoint, and
// OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none does not turn it off.
func (c Config) Enabled() bool {
	if strings.EqualFold(os.Getenv("OTEL_SDK_DISABLED"), "true") || strings.EqualFold(os.Getenv("OTEL_TRACES_EXPORTER"), "none") {
		return false
	}
	if c.Endpoint != "" {
		return true
	}
	for _, name := range endpointEnv {
		if os.Getenv(name) != "" {
			return true
		}
	}
	return false
}

// Validate checks c without reading the environment.
func (c Config) Validate() error {
	var errs []error
	switch c.Protocol {
	case "", ProtocolGRPC, ProtocolHTTP:
	default:
		errs = append(errs, fmt.Errorf("protocol must be %q or %q, not %q", ProtocolGRPC, ProtocolHTTP, c.Protocol))
	}
	if c.Endpoint != "" {
		if err := CheckEndpoint(c.Endpoint); err != nil {
			errs = append(errs, err)
		}
	}
	if r := c.SamplingRatio; r != nil && (*r < 0 || *r > 1) {
		errs = append(errs, fmt.Errorf("sampling ratio must be between 0 and 1, not %g", *r))
	}
	for name := range c.Headers {
		if name == "" || strings.ContainsAny(name, " \t\r\n:") {
			errs = append(errs, fmt.Errorf("header name %q is not valid", name))
		}
	}
	return errors.Join(errs...)
}

// CheckEndpoint says what is wrong with an endpoint, nil when nothing is.
func CheckEndpoint(e string) error {
	if strings.Contains(e, "://") {
		u, err := url.Parse(e)
		if err != nil {
			return fmt.Errorf("endpoint %q is not a URL: %w", e, err)
		}
		if u.Scheme != "http" && u.Scheme != "https" {
			return fmt.Errorf("endpoint %q must start with http:// or https://, or be HOST:PORT", e)
		}
		if u.Host == "" {
			return fmt.Errorf("endpoint %q names no host", e)
		}
		return nil
	}
	host, port, ok := strings.Cut(e, ":")
	if !ok || host == "" || port == "" || strings.ContainsAny(e, "/?#") {
		return fmt.Errorf("endpoint %q must be a URL such as http://collector:4318 or HOST:PORT", e)
	}
	return nil
}

// protocol is the protocol c exports with.
func (c Config) protocol() string {
	if c.Protocol != "" {
		return c.Protocol
	}
	for _, name := range []string{"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_PROTOCOL"} {
		switch os.Getenv(name) {
		case "grpc":
			return ProtocolGRPC
		case "http/protobuf", "http/json":
			return ProtocolHTTP
		}
	}
	return ProtocolHTTP
}

// New returns a Tracer exporting over OTLP as c and the environment say,
// or nil when tracing is not enabled (see Config.Enabled). Nothing is
// sent before the first span; an unreachable receiver costs dropped spans,
// never events. Shutdown flushes what is pending.
func New(ctx context.Context, c Config) (*Tracer, error) {
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	if !c.Enabled() {
		return nil, nil
	}
	exp, err := c.exporter(ctx)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	res, err := resource.Merge(
		resource.NewSchemaless(semconv.ServiceName(DefaultServiceName)),
		resource.Environment(),
	)
	if err != nil {
		return nil, fmt.Errorf("tracing: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithBatcher(exp), sdktrace.WithResource(res)}
	if c.SamplingRatio != nil {
		opts = append(opts, sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(*c.SamplingRatio))))
	}
	return NewProvider(sdktrace.NewTracerProvider(opts...)), nil
}

func (c Config) exporter(ctx context.Context) (*otlptrace.Exporter, error) {
	if c.protocol() == ProtocolGRPC {
		var opts []otlptracegrpc.Option
		switch {
		case strings.Contains(c.Endpoint, "://"):
			opts = append(opts, otlptracegrpc.WithEndpointURL(c.Endpoint))
		case c.Endpoint != "":
			opts = append(opts, otlptracegrpc.WithEndpoint(c.Endpoint))
		}
		if c.Insecure {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		if len(c.Headers) > 0 {
			opts = append(opts, otlptracegrpc.WithHeaders(c.Headers))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	switch {
	case strings.Contains(c.Endpoint, "://"):
		u, _ := url.Parse(c.Endpoint)
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(u.String()))
	case c.Endpoint != "":
		opts = append(opts, otlptracehttp.WithEndpoint(c.Endpoint))
	}
	if c.Insecure {
		opts = append(opts, otlptracehttp.WithInsecure())
	}
	if len(c.Headers) > 0 {
		opts = append(opts, otlptracehttp.WithHeaders(c.Headers))
	}
	return otlptracehttp.New(ctx, opts...)
}

// String describes where c exports, for the line the runtime logs at
// start; header values are left out, as they are often keys, and a
// password or query values in the endpoint are masked.
func (c Config) String() string {
	var b strings.Builder
	endpoint := c.Endpoint
	if endpoint == "" {
		for _, name := range endpointEnv {
			if v := os.Getenv(name); v != "" {
				endpoint = v + " ($" + name + ")"
				break
			}
		}
	}
	fmt.Fprintf(&b, "OTLP/%s to %s", c.protocol(), redact.Text(endpoint))
	if len(c.Headers) > 0 {
		names := make([]string, 0, len(c.Headers))
		for n := range c.Headers {
			names = append(names, n)
		}
		sort.Strings(names)
		fmt.Fprintf(&b, " with headers %s", strings.Join(names, ", "))
	}
	if c.SamplingRatio != nil {
		fmt.Fprintf(&b, ", sampling %g of new traces", *c.SamplingRatio)
	}
	return b.String()
}
