package ui_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/topology"
)

// TestSourcesAndFlowsOnTheLivePage serves examples/sources (a PingSource,
// an ApiServerSource, a ContainerSource, a Sequence and a Parallel) as
// knc run does: the page lists every source, and each flow with its steps
// or branches, exactly the sources and routes knc graph draws, not the
// Channels and Subscriptions the flows were compiled into; a Sequence
// counts the events its first Channel accepts, and a step the deliveries
// to its subscriber.
func TestSourcesAndFlowsOnTheLivePage(t *testing.T) {
	ok, _, received := subscribers(t)
	table, drawn := localExample(t, "sources", ok)
	s := serve(t, table, setup{graph: drawn})

	code, b := get(t, s.url+"/ui/api/topology")
	if code != http.StatusOK {
		t.Fatalf("GET /ui/api/topology: %d %s", code, b)
	}
	var listed struct {
		Nodes []struct{ ID, Kind, Source string }
	}
	if err := json.Unmarshal(b, &listed); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, n := range listed.Nodes {
		got = append(got, n.ID)
	}
	var want []string
	for _, ns := range drawn.Namespaces {
		for _, src := range ns.Sources {
			want = append(want, src.ID)
			for _, r := range src.Routes {
				want = append(want, r.ID)
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the page's nodes (-knc graph +page):\n%s", diff)
	}
	const (
		sequence = "Sequence.flows.knative.dev/sources-demo/order-pipeline"
		parallel = "Parallel.flows.knative.dev/sources-demo/order-fan-out"
	)
	for _, id := range []string{
		"ApiServerSource.sources.knative.dev/sources-demo/pod-changes",
		"ContainerSource.sources.knative.dev/sources-demo/order-feed",
		"PingSource.sources.knative.dev/sources-demo/heartbeat",
		sequence, sequence + "/1", sequence + "/2",
		parallel, parallel + "/1", parallel + "/2",
	} {
		if !slices.Contains(got, id) {
			t.Errorf("the page does not list %s", id)
		}
	}
	for _, id := range got {
		if id == "Channel/sources-demo/order-pipeline-kn-sequence-0" || id == "Subscription/sources-demo/order-fan-out-kn-parallel-0" {
			t.Errorf("the page lists %s, a part of a flow", id)
		}
	}
	for _, n := range listed.Nodes {
		if n.ID == sequence+"/1" && (n.Kind != topology.KindStep || n.Source != sequence) {
			t.Errorf("the first step is listed as a %s of %s, want a Step of the Sequence", n.Kind, n.Source)
		}
	}

	// An order sent to the Sequence's address is counted at the Sequence,
	// and delivered by its first step.
	send(t, s.url, "/channels/sources-demo/order-pipeline-kn-sequence-0", "com.example.order.created", 1)
	poll(t, "the first step's delivery", func() bool { return received.Load() >= 1 })
	poll(t, "the page to count it", func() bool {
		st := getState(t, s.url)
		return st[sequence] != nil && st[sequence].Counts.Accepted == 1 &&
			st[sequence+"/1"] != nil && st[sequence+"/1"].Counts.Delivered == 1
	})
	st := getState(t, s.url)
	if c := st[sequence+"/2"]; c == nil || c.Counts.Delivered != 0 {
		t.Errorf("the second step's state is %+v, want nothing delivered: the first step answered with no event", c)
	}
}
