package topology

import (
	"errors"
	"fmt"
)

// Size is the number of nodes and edges WriteDOT draws of g, which is what
// a layout of it costs.
func Size(g *Graph) (nodes, edges int) {
	f := flatten(g)
	return len(f.byID), len(f.edges)
}

// FontFamily is the font WriteDOT sizes every box by.
const FontFamily = fontFamily

// The most nodes and edges laid out. Past a few thousand, dot's time
// and memory grow faster than the square of the graph, most of all where
// deliveries form cycles: a mesh of 1,700 Brokers and 5,100 Triggers
// forwarding to each other was not laid out in ten minutes. A part of
// such a topology, around one node or one Broker, is what can be read.
const (
	MaxLayoutNodes = 2000
	MaxLayoutEdges = 4000
)

// ErrTooLargeToLayOut is returned for a graph of more nodes or edges
// than are laid out.
var ErrTooLargeToLayOut = errors.New("too large to lay out")

// ErrLayoutStopped is returned when the context of a layout is done
// before the layout: the program is being stopped, the client left, or
// the time given to the layout ran out. Graphviz runs as WebAssembly
// that cannot be interrupted: internal/topology/drawing runs it in a
// process of its own, which it kills; a layout in the process itself
// (internal/topology/layout, in tests) goes on to its end.
var ErrLayoutStopped = errors.New("the layout was stopped")

// CheckSize refuses a graph larger than is laid out.
func CheckSize(g *Graph) error {
	nodes, edges := Size(g)
	if nodes <= MaxLayoutNodes && edges <= MaxLayoutEdges {
		return nil
	}
	return fmt.Errorf("the topology has %d nodes and %d edges, %w (at most %d nodes and %d edges)",
		nodes, edges, ErrTooLargeToLayOut, MaxLayoutNodes, MaxLayoutEdges)
}
