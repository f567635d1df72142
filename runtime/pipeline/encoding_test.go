package pipeline

import (
	"context"
	"sync"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// sendsSeen records the options of each attempt it is asked to make.
type sendsSeen struct {
	mu   sync.Mutex
	opts []delivery.Options
}

func (s *sendsSeen) Send(_ context.Context, _ *event.Event, _ string, o delivery.Options) delivery.Result {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.opts = append(s.opts, o)
	return delivery.Result{Success: true}
}

// An event that goes to several targets is encoded once, by the route
// stage, and each first attempt to a subscriber sends that encoding; an
// attempt of another event (a dead letter, a reply) does not.
func TestFanOutSharesTheEventsEncoding(t *testing.T) {
	ev := event.New()
	ev.SetID("1")
	ev.SetSource("/s")
	ev.SetType("t")
	ev.SetExtension("knativebrokerttl", 5)
	set := metrics.New(prometheus.NewRegistry())
	src := &Source{kind: KindBroker, metrics: set.ForSource("b", "broker", routing.Source{Namespace: "ns", Name: "b"})}
	for range 3 {
		src.targets = append(src.targets, &Target{kind: knative.KindTrigger})
	}
	seen := &sendsSeen{}
	p := &Processor{send: seen}

	enc := src.shareEncoding(&ev, []int{0, 1, 2})
	if !enc.For(routing.FormatBinary, "knativebrokerttl") {
		t.Fatalf("the shared encoding is not for a Trigger's subscriber in binary mode")
	}
	for _, tg := range src.targets {
		a := &attempt{p: p, src: src, t: tg, ev: &ev, n: 1, encoded: enc}
		a.send(t.Context(), a.ev, "http://subscriber.invalid/", nil, true)
	}
	other := ev.Clone()
	a := &attempt{p: p, src: src, t: src.targets[0], ev: &ev, n: 1, encoded: enc}
	a.send(t.Context(), &other, "http://sink.invalid/", nil, false)

	if len(seen.opts) != 4 {
		t.Fatalf("%d sends, want 4", len(seen.opts))
	}
	for i, o := range seen.opts[:3] {
		if o.Encoded != enc {
			t.Errorf("attempt %d to a subscriber encoded the event again", i+1)
		}
		if o.OmitExtension != "knativebrokerttl" || !o.StrictReply {
			t.Errorf("attempt %d: OmitExtension %q, StrictReply %v", i+1, o.OmitExtension, o.StrictReply)
		}
	}
	if seen.opts[3].Encoded != nil {
		t.Error("the send of another event was given the event's encoding")
	}
}
