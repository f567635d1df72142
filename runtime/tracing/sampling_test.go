package tracing_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"

	"github.com/knc-dev/knc/runtime/tracing"
	"github.com/knc-dev/knc/runtime/tracing/otlptest"
)

// TestSamplingRatioFollowsTheParent checks that samplingRatio applies to
// traces that start at the runtime, while a request's sampled trace
// context is followed, so that a trace is never cut in the middle; and
// that what is sampled reaches the receiver.
func TestSamplingRatioFollowsTheParent(t *testing.T) {
	t.Setenv("OTEL_TRACES_SAMPLER", "")
	rcv, err := otlptest.NewHTTP()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rcv.Close)
	none := 0.0
	tr, err := tracing.New(context.Background(), tracing.Config{Endpoint: rcv.URL, SamplingRatio: &none})
	if err != nil {
		t.Fatal(err)
	}
	ev := event.New()
	ev.SetID("e1")
	ev.SetSource("/s")
	ev.SetType("t")
	src := tracing.NewSource(true, "ns/b")

	_, root := tr.StartIngress(http.Header{}, &ev, src, time.Now())
	if root.Recording() {
		t.Error("a trace started here is sampled with samplingRatio 0")
	}
	root.EndIngress(http.StatusAccepted, nil)

	sampled := http.Header{"Traceparent": {"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}}
	_, child := tr.StartIngress(sampled, &ev, src, time.Now())
	if !child.Recording() {
		t.Error("a request whose trace is sampled is not sampled here")
	}
	child.EndIngress(http.StatusAccepted, nil)

	if err := tr.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	spans := rcv.Spans()
	if len(spans) != 1 || spans[0].TraceID != "4bf92f3577b34da6a3ce929d0e0e4736" || spans[0].Attributes["http.response.status_code"] != "202" {
		t.Errorf("received %+v, want the one span of the sampled trace", spans)
	}
}
