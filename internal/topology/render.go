package topology

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/goccy/go-graphviz"
)

// WriteSVG writes g as a standalone SVG image, laid out by Graphviz's dot
// from the DOT that WriteDOT writes. Graphviz runs as WebAssembly inside
// the process, so no external tool is needed.
func WriteSVG(w io.Writer, g *Graph) error {
	var buf bytes.Buffer
	if err := render(&buf, g, graphviz.SVG); err != nil {
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
	return render(w, g, graphviz.PNG)
}

// engine is the one Graphviz context of the process. Its WebAssembly
// module is global to go-graphviz and not safe for concurrent use, so
// every layout holds the lock.
var engine struct {
	sync.Mutex
	gv *graphviz.Graphviz
}

func render(w io.Writer, g *Graph, format graphviz.Format) error {
	var dot bytes.Buffer
	if err := WriteDOT(&dot, g); err != nil {
		return err
	}
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
	parsed, err := graphviz.ParseBytes(dot.Bytes())
	if err != nil {
		return fmt.Errorf("reading the DOT drawing: %w", err)
	}
	defer parsed.Close()
	if err := engine.gv.Render(ctx, parsed, format, w); err != nil {
		return fmt.Errorf("laying out the drawing: %w", err)
	}
	return nil
}
