package plugins_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	appsv1 "k8s.io/api/apps/v1"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/plugins"
)

// TestTracingReachesTheRuntime checks that runtime.tracing becomes
// settings of the runtime's ConfigMap and the flags that read them, and
// that the headers read back as they were written.
func TestTracingReachesTheRuntime(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	headers := map[string]string{"x-team": "shop", "authorization": `Basic a,b"c`}
	objs, err := p.Render(&plugins.Request{Namespace: "shop", Table: oneBroker(), Config: runtimeConfig(&project.Runtime{
		Tracing: &project.Tracing{Endpoint: "http://otel-collector.observability:4318", Protocol: "grpc", Insecure: true, SamplingRatio: ptr(0.25), Headers: headers},
	})})
	if err != nil {
		t.Fatal(err)
	}
	data := configData(t, objs)
	var deps []appsv1.Deployment
	rendered(t, objs, "Deployment", &deps)
	args := deps[0].Spec.Template.Spec.Containers[0].Args
	for flag, want := range map[string]string{
		"--tracing-endpoint":       "http://otel-collector.observability:4318",
		"--tracing-protocol":       "grpc",
		"--tracing-sampling-ratio": "0.25",
	} {
		v := argValue(args, flag)
		if got := expand(v, data); got != want {
			t.Errorf("%s %s = %q, want %q", flag, v, got, want)
		}
	}
	if !containsArg(args, "--tracing-insecure") {
		t.Errorf("no --tracing-insecure in %v", args)
	}
	fs := pflag.NewFlagSet("runtime", pflag.ContinueOnError)
	got := fs.StringToString("tracing-header", nil, "")
	if err := fs.Parse([]string{"--tracing-header", expand(argValue(args, "--tracing-header"), data)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(headers, *got); diff != "" {
		t.Errorf("headers read back (-want +got):\n%s", diff)
	}
}

func TestNoTracingNoFlags(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	objs, err := p.Render(&plugins.Request{Namespace: "shop", Table: oneBroker(), Config: runtimeConfig(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var deps []appsv1.Deployment
	rendered(t, objs, "Deployment", &deps)
	for _, a := range deps[0].Spec.Template.Spec.Containers[0].Args {
		if len(a) > 10 && a[:10] == "--tracing-" {
			t.Errorf("flag %s without runtime.tracing", a)
		}
	}
}

// expand replaces a whole $(VAR) argument by its ConfigMap value, as the
// kubelet does.
func expand(arg string, data map[string]string) string {
	if len(arg) > 3 && arg[:2] == "$(" && arg[len(arg)-1] == ')' {
		return data[arg[2:len(arg)-1]]
	}
	return arg
}

func containsArg(args []string, a string) bool {
	for _, x := range args {
		if x == a {
			return true
		}
	}
	return false
}
