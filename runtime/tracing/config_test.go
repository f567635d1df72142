package tracing

import (
	"context"
	"strings"
	"testing"
)

func ratio(f float64) *float64 { return &f }

func TestConfigValidate(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
		want string // "" for valid
	}{
		{"empty", Config{}, ""},
		{"url", Config{Endpoint: "http://collector:4318"}, ""},
		{"https url with path", Config{Endpoint: "https://otlp.example.com/v1/traces", Protocol: ProtocolHTTP}, ""},
		{"host and port", Config{Endpoint: "collector:4317", Protocol: ProtocolGRPC, Insecure: true}, ""},
		{"ratio bounds", Config{Endpoint: "collector:4317", SamplingRatio: ratio(0)}, ""},
		{"bad protocol", Config{Protocol: "udp"}, `protocol must be "grpc" or "http", not "udp"`},
		{"bad scheme", Config{Endpoint: "grpc://collector:4317"}, "must start with http:// or https://"},
		{"no port", Config{Endpoint: "collector"}, "must be a URL such as http://collector:4318 or HOST:PORT"},
		{"ratio above 1", Config{SamplingRatio: ratio(1.5)}, "sampling ratio must be between 0 and 1, not 1.5"},
		{"bad header", Config{Headers: map[string]string{"x key": "v"}}, `header name "x key" is not valid`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := c.cfg.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Errorf("Validate() = %v, want an error with %q", err, c.want)
			}
		})
	}
}

func TestEnabled(t *testing.T) {
	for _, name := range []string{"OTEL_SDK_DISABLED", "OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"} {
		t.Setenv(name, "")
	}
	if (Config{}).Enabled() {
		t.Error("tracing is on with no endpoint")
	}
	tr, err := New(context.Background(), Config{})
	if err != nil || tr != nil {
		t.Errorf("New(no endpoint) = %v, %v; want no tracer and no error", tr, err)
	}
	if !(Config{Endpoint: "collector:4317"}).Enabled() {
		t.Error("tracing is off with an endpoint")
	}
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318")
	if !(Config{}).Enabled() {
		t.Error("tracing is off with $OTEL_EXPORTER_OTLP_ENDPOINT set")
	}
	if got := (Config{}).String(); got != "OTLP/http to http://collector:4318 ($OTEL_EXPORTER_OTLP_ENDPOINT)" {
		t.Errorf("String() = %q", got)
	}
	t.Setenv("OTEL_TRACES_EXPORTER", "none")
	if (Config{Endpoint: "collector:4317"}).Enabled() {
		t.Error("tracing is on with OTEL_TRACES_EXPORTER=none")
	}
}

func TestProtocolFromEnvironment(t *testing.T) {
	t.Setenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
	if got := (Config{}).protocol(); got != ProtocolGRPC {
		t.Errorf("protocol = %q with OTEL_EXPORTER_OTLP_PROTOCOL=grpc", got)
	}
	if got := (Config{Protocol: ProtocolHTTP}).protocol(); got != ProtocolHTTP {
		t.Errorf("protocol = %q, want the configured http over the environment", got)
	}
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "")
	if got := (Config{}).protocol(); got != ProtocolHTTP {
		t.Errorf("protocol = %q, want OTLP's default, http", got)
	}
}

func TestStringLeavesOutHeaderValues(t *testing.T) {
	c := Config{Endpoint: "https://otlp.example.com", Protocol: ProtocolGRPC, Headers: map[string]string{"api-key": "s3cret"}, SamplingRatio: ratio(0.25)}
	got := c.String()
	if strings.Contains(got, "s3cret") {
		t.Errorf("String() = %q shows a header value", got)
	}
	if want := "OTLP/grpc to https://otlp.example.com with headers api-key, sampling 0.25 of new traces"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if got := (Config{Endpoint: "https://user:s3cret@otlp.example.com/v1/traces?key=s3cret"}).String(); strings.Contains(got, "s3cret") {
		t.Errorf("String() = %q shows a secret of the endpoint", got)
	}
}
