// Package layout lays out the drawings of internal/topology with
// Graphviz's dot, as SVG and PNG. It is apart from internal/topology
// because go-graphviz compiles its WebAssembly module in a package init,
// at every start of a binary that links it: only the commands that draw
// (knc graph, knc run's live page) link this package, and the runtime's
// own binary does not.
package layout

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/goccy/go-graphviz"

	"github.com/knc-dev/knc/internal/graphvizcache"

	"github.com/knc-dev/knc/internal/topology"
)

// go-graphviz chose its cache directory in its init, which has run by now
// (this package imports it): TMPDIR can be what the user set again.
func init() { graphvizcache.Restore() }

// WriteSVG writes g as a standalone SVG image, laid out by Graphviz's dot
// from the DOT that topology.WriteDOT writes. Graphviz runs as WebAssembly inside
// the process, so no external tool is needed.
func WriteSVG(w io.Writer, g *topology.Graph) error {
	return WriteSVGContext(context.Background(), w, g)
}

// WriteSVGContext is WriteSVG that gives up when ctx is done; see
// topology.ErrLayoutStopped.
func WriteSVGContext(ctx context.Context, w io.Writer, g *topology.Graph) error {
	var buf bytes.Buffer
	if err := render(ctx, &buf, g, graphviz.SVG); err != nil {
		return err
	}
	_, err := w.Write(bytes.ReplaceAll(buf.Bytes(), []byte(`font-family="`+topology.FontFamily+`"`), []byte(`font-family="`+svgFontFamily+`"`)))
	return err
}

// Format is an output format of LayOutDOT.
type Format string

// The formats LayOutDOT writes.
const (
	SVG Format = "svg"
	PNG Format = "png"
)

// LayOutDOT lays out a drawing given as the DOT topology.WriteDOT wrote,
// and writes it in format to w: what knc-draw does for knc's commands.
func LayOutDOT(w io.Writer, dot []byte, format Format) error {
	var out bytes.Buffer
	switch format {
	case SVG:
		if err := layOut(&out, dot, graphviz.SVG); err != nil {
			return err
		}
		_, err := w.Write(bytes.ReplaceAll(out.Bytes(), []byte(`font-family="`+topology.FontFamily+`"`), []byte(`font-family="`+svgFontFamily+`"`)))
		return err
	case PNG:
		if err := layOut(&out, dot, graphviz.PNG); err != nil {
			return err
		}
		_, err := w.Write(out.Bytes())
		return err
	}
	return fmt.Errorf("unknown format %q: want svg or png", format)
}

// svgFontFamily is the font of the SVG's text: Verdana, whose widths the
// boxes were sized by, or else a face of like width, not the viewer's
// default serif.
const svgFontFamily = topology.FontFamily + ",DejaVu Sans,Bitstream Vera Sans,sans-serif"

// WritePNG writes g as a PNG image, laid out as WriteSVG lays it out.
func WritePNG(w io.Writer, g *topology.Graph) error {
	return WritePNGContext(context.Background(), w, g)
}

// WritePNGContext is WritePNG that gives up when ctx is done; see
// topology.ErrLayoutStopped.
func WritePNGContext(ctx context.Context, w io.Writer, g *topology.Graph) error {
	return render(ctx, w, g, graphviz.PNG)
}

// engine is the one Graphviz context of the process. Its WebAssembly
// module is global to go-graphviz and not safe for concurrent use, so
// every layout holds the lock.
var engine struct {
	sync.Mutex
	gv *graphviz.Graphviz
}

func render(ctx context.Context, w io.Writer, g *topology.Graph, format graphviz.Format) error {
	if err := topology.CheckSize(g); err != nil {
		return err
	}
	var dot bytes.Buffer
	if err := topology.WriteDOT(&dot, g); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
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
		return fmt.Errorf("%w: %w", topology.ErrLayoutStopped, context.Cause(ctx))
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
