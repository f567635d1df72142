package topology

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/goccy/go-graphviz"
)

// WriteSVG writes g as a standalone SVG image, laid out by Graphviz's dot
// from the DOT that WriteDOT writes. Graphviz runs as WebAssembly inside
// the process, so no external tool is needed.
func WriteSVG(w io.Writer, g *Graph) error {
	return WriteSVGContext(context.Background(), w, g)
}

// WriteSVGContext is WriteSVG that gives up when ctx is done; see
// ErrLayoutStopped.
func WriteSVGContext(ctx context.Context, w io.Writer, g *Graph) error {
	var buf bytes.Buffer
	if err := render(ctx, &buf, g, graphviz.SVG); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte(`font-family="`+fontFamily+`"`), []byte(`font-family="`+svgFontFamily+`"`)))
	return err
}

// svgFontFamily is the font of the SVG's text: Verdana, whose widths the
// boxes were sized by, or else a face of like width, not the viewer's
// default serif.
const svgFontFamily = fontFamily + ",DejaVu Sans,Bitstream Vera Sans,sans-serif"

// WritePNG writes g as a PNG image, laid out as WriteSVG lays it out.
func WritePNG(w io.Writer, g *Graph) error {
	return WritePNGContext(context.Background(), w, g)
}

// WritePNGContext is WritePNG that gives up when ctx is done; see
// ErrLayoutStopped.
func WritePNGContext(ctx context.Context, w io.Writer, g *Graph) error {
	return render(ctx, w, g, graphviz.PNG)
}

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
// that cannot be interrupted, so the layout itself goes on to its end;
// what bounds it is the size of the graph, and a command that stops
// exits, which ends it.
var ErrLayoutStopped = errors.New("the layout was stopped")

// checkSize refuses a graph larger than is laid out.
func checkSize(g *Graph) error {
	f := flatten(g)
	nodes, edges := len(f.byID), len(f.edges)
	if nodes <= MaxLayoutNodes && edges <= MaxLayoutEdges {
		return nil
	}
	return fmt.Errorf("the topology has %d nodes and %d edges, %w (at most %d nodes and %d edges)",
		nodes, edges, ErrTooLargeToLayOut, MaxLayoutNodes, MaxLayoutEdges)
}

// engine is the one Graphviz context of the process. Its WebAssembly
// module is global to go-graphviz and not safe for concurrent use, so
// every layout holds the lock.
var engine struct {
	sync.Mutex
	gv *graphviz.Graphviz
}

func render(ctx context.Context, w io.Writer, g *Graph, format graphviz.Format) error {
	if err := checkSize(g); err != nil {
		return err
	}
	var dot bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", ErrLayoutStopped, context.Cause(ctx))
	}
	// The layout runs on its own, into a buffer of its own, so that the
	// caller can leave when ctx is done; w is written only after it.
	var out bytes.Buffer
	done := make(chan error, 1)
	go func() { done <- layOut(&out, dot.Bytes(), format) }()
	select {
	case err := <-done:
		if err != nil {
			return err
		}
		_, err = w.Write(out.Bytes())
		return err
	case <-ctx.Done():
		return fmt.Errorf("%w: %w", ErrLayoutStopped, context.Cause(ctx))
	}
}

// layOut lays out dot and writes it in format to w.
func layOut(w io.Writer, dot []byte, format graphviz.Format) error {
	engine.Lock()
	defer engine.Unlock()
	ctx := context.Background()
	if engine.gv == nil {
		plugins, err := pngPlugins(ctx)
		if err != nil {
			return fmt.Errorf("starting graphviz: %w", err)
		}
		gv, err := graphviz.NewWithPlugins(ctx, plugins...)
		if err != nil {
			return fmt.Errorf("starting graphviz: %w", err)
		}
		engine.gv = gv
	}
	parsed, err := graphviz.ParseBytes(dot)
	if err != nil {
		return fmt.Errorf("reading the DOT drawing: %w", err)
	}
	defer parsed.Close()
	if err := engine.gv.Render(ctx, parsed, format, w); err != nil {
		return fmt.Errorf("laying out the drawing: %w", err)
	}
	return nil
}
