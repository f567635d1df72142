package layout_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// cyclicMesh is brokers Brokers with three Triggers each, every Trigger
// forwarding to another Broker: deliveries that form cycles, which dot
// lays out slowest of all.
func cyclicMesh(brokers int) *topology.Graph {
	sources := map[string]*topology.Source{}
	for b := range brokers {
		s := &topology.Source{ID: fmt.Sprintf("Broker/m/b%d", b), Kind: topology.KindBroker, Namespace: "m", Name: fmt.Sprintf("b%d", b)}
		for t := range 3 {
			name := fmt.Sprintf("t%d-%d", b, t)
			s.Routes = append(s.Routes, &topology.Route{
				ID: "Trigger/m/" + name, Kind: topology.KindTrigger, Namespace: "m", Name: name,
				Edges: []*topology.Edge{{Role: topology.Subscriber, To: fmt.Sprintf("Broker/m/b%d", (b*7+t+1)%brokers)}},
			})
		}
		sources[s.ID] = s
	}
	return topology.Assemble(sources, nil)
}

// TestLayoutRefusesWhatIsTooLargeToLayOut: a cyclic mesh of 1,700
// Brokers and 5,100 Triggers (10,200 edges with each Trigger's from its
// Broker) was not laid out in ten minutes; it is
// refused at once, before Graphviz starts, naming its size.
func TestLayoutRefusesWhatIsTooLargeToLayOut(t *testing.T) {
	g := cyclicMesh(1700)
	for name, write := range map[string]func(context.Context, *bytes.Buffer, *topology.Graph) error{
		"svg": func(ctx context.Context, b *bytes.Buffer, g *topology.Graph) error {
			return layout.WriteSVGContext(ctx, b, g)
		},
		"png": func(ctx context.Context, b *bytes.Buffer, g *topology.Graph) error {
			return layout.WritePNGContext(ctx, b, g)
		},
	} {
		var out bytes.Buffer
		err := write(t.Context(), &out, g)
		if !errors.Is(err, topology.ErrTooLargeToLayOut) {
			t.Fatalf("%s: error %v, want %v", name, err, topology.ErrTooLargeToLayOut)
		}
		if want := "the topology has 6800 nodes and 10200 edges, too large to lay out (at most 2000 nodes and 4000 edges)"; err.Error() != want {
			t.Errorf("%s: error %q, want %q", name, err, want)
		}
		if out.Len() != 0 {
			t.Errorf("%s: %d bytes written, want none", name, out.Len())
		}
	}
	// The edges count too.
	wide := &topology.Source{ID: "Broker/m/wide", Kind: topology.KindBroker, Namespace: "m", Name: "wide"}
	for i := range topology.MaxLayoutEdges + 1 {
		wide.Edges = append(wide.Edges, &topology.Edge{Role: topology.DeadLetter, To: fmt.Sprintf("uri:https://example.com/%d", i%10)})
	}
	err := layout.WriteSVG(&bytes.Buffer{}, topology.Assemble(map[string]*topology.Source{wide.ID: wide}, nil))
	if !errors.Is(err, topology.ErrTooLargeToLayOut) || !strings.Contains(err.Error(), "4001 edges") {
		t.Errorf("4,001 edges: error %v, want %v naming them", err, topology.ErrTooLargeToLayOut)
	}
}

// TestLayoutStopsWithItsContext: a layout whose context is done is not
// waited for, and its cause is said.
func TestLayoutStopsWithItsContext(t *testing.T) {
	cause := errors.New("interrupted")
	ctx, cancel := context.WithCancelCause(t.Context())
	cancel(cause)
	var out bytes.Buffer
	err := layout.WriteSVGContext(ctx, &out, cyclicMesh(3))
	if !errors.Is(err, topology.ErrLayoutStopped) || !errors.Is(err, cause) {
		t.Fatalf("error %v, want %v and %v", err, topology.ErrLayoutStopped, cause)
	}
	if out.Len() != 0 {
		t.Errorf("%d bytes written, want none", out.Len())
	}
	// Within the limits, with time, it is drawn.
	if err := layout.WriteSVGContext(t.Context(), &out, cyclicMesh(3)); err != nil || !bytes.Contains(out.Bytes(), []byte("<svg")) {
		t.Errorf("a small mesh: %d bytes, error %v; want an SVG", out.Len(), err)
	}
}
