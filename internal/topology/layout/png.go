package layout

import (
	"bytes"
	"context"
	"fmt"
	"sync"

	"github.com/fogleman/gg"
	"github.com/goccy/go-graphviz/gvc"
	"github.com/golang/freetype/truetype"
	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"
)

// pngRenderer draws Graphviz's layout into an image. It stands in for
// go-graphviz's own PNG renderer, which fills a shape without stroking its
// outline and so draws boxes without borders and lines without width. It
// uses the Go fonts, embedded in the binary, so that the image is the same
// on every machine, and fits each line of text into the width Graphviz
// reserved for it.
type pngRenderer struct {
	gvc.DefaultRenderEngine
	ctx *gg.Context
}

// pngPlugins are the plugins Graphviz renders PNG with.
func pngPlugins(ctx context.Context) ([]gvc.Plugin, error) {
	render, err := gvc.NewRenderPlugin(ctx, "png", &pngRenderer{})
	if err != nil {
		return nil, err
	}
	device, err := gvc.PNGDevicePlugin(ctx)
	if err != nil {
		return nil, err
	}
	return []gvc.Plugin{render, device}, nil
}

func (r *pngRenderer) point(job *gvc.Job, p *gvc.PointFloat) (float64, float64) {
	s := job.Scale()
	return s.X() * p.X(), s.Y() * -p.Y()
}

func (r *pngRenderer) BeginPage(_ context.Context, job *gvc.Job) error {
	r.ctx = gg.NewContext(int(job.Width()), int(job.Height()))
	r.ctx.SetRGB(1, 1, 1)
	r.ctx.Clear()
	s, t := job.Scale(), job.Translation()
	r.ctx.Translate(s.X()*t.X(), s.Y()*-t.Y())
	return nil
}

func (r *pngRenderer) EndPage(_ context.Context, job *gvc.Job) error {
	var buf bytes.Buffer
	if err := r.ctx.EncodePNG(&buf); err != nil {
		return fmt.Errorf("encoding the PNG: %w", err)
	}
	job.SetOutputData(buf.Bytes())
	job.SetOutputDataPosition(uint(buf.Len()))
	r.ctx = nil
	return nil
}

func (r *pngRenderer) setColour(c *gvc.Color) {
	v := c.RGBAUint()
	r.ctx.SetRGBA255(int(v[0]), int(v[1]), int(v[2]), int(v[3]))
}

// paint fills the current path with the fill colour when filled, then
// strokes it with the pen unless the pen is none.
func (r *pngRenderer) paint(job *gvc.Job, filled bool) {
	o := job.Object()
	if filled {
		r.setColour(o.FillColor())
		r.ctx.FillPreserve()
	}
	if o.Pen() == gvc.PenNone {
		r.ctx.ClearPath()
		return
	}
	s := job.Scale().X()
	switch o.Pen() {
	case gvc.PenDashed:
		r.ctx.SetDash(5*s, 2*s)
	case gvc.PenDotted:
		r.ctx.SetDash(1*s, 2*s)
	default:
		r.ctx.SetDash()
	}
	r.ctx.SetLineWidth(o.PenWidth() * s)
	r.setColour(o.PenColor())
	r.ctx.Stroke()
}

func (r *pngRenderer) Ellipse(_ context.Context, job *gvc.Job, p []*gvc.PointFloat, filled bool) error {
	cx, cy := r.point(job, p[0])
	x1, y1 := r.point(job, p[1])
	r.ctx.DrawEllipse(cx, cy, abs(x1-cx), abs(y1-cy))
	r.paint(job, filled)
	return nil
}

func (r *pngRenderer) Polygon(_ context.Context, job *gvc.Job, p []*gvc.PointFloat, filled bool) error {
	r.path(job, p)
	r.ctx.ClosePath()
	r.paint(job, filled)
	return nil
}

func (r *pngRenderer) Polyline(_ context.Context, job *gvc.Job, p []*gvc.PointFloat) error {
	r.path(job, p)
	r.paint(job, false)
	return nil
}

func (r *pngRenderer) path(job *gvc.Job, p []*gvc.PointFloat) {
	r.ctx.NewSubPath()
	for i, q := range p {
		x, y := r.point(job, q)
		if i == 0 {
			r.ctx.MoveTo(x, y)
		} else {
			r.ctx.LineTo(x, y)
		}
	}
}

func (r *pngRenderer) BezierCurve(_ context.Context, job *gvc.Job, p []*gvc.PointFloat, filled bool) error {
	r.ctx.NewSubPath()
	x, y := r.point(job, p[0])
	r.ctx.MoveTo(x, y)
	for i := 1; i+2 < len(p); i += 3 {
		x1, y1 := r.point(job, p[i])
		x2, y2 := r.point(job, p[i+1])
		x3, y3 := r.point(job, p[i+2])
		r.ctx.CubicTo(x1, y1, x2, y2, x3, y3)
	}
	// An edge is a line: go-graphviz passes it as filled for some pens,
	// which would fill the area under the curve.
	r.paint(job, filled && job.Object().Type() != gvc.EdgeObjectType)
	return nil
}

// fontBold is Graphviz's flag for bold text (HTML_BF).
const fontBold = 1

func (r *pngRenderer) TextSpan(_ context.Context, job *gvc.Job, p *gvc.PointFloat, span *gvc.TextSpan) error {
	text := span.Text()
	if text == "" {
		return nil
	}
	s := job.Scale().X()
	f := span.Font()
	face, err := goFace(f.Flags()&fontBold != 0, f.Size()*s)
	if err != nil {
		return err
	}
	r.ctx.Push()
	defer r.ctx.Pop()
	r.ctx.SetFontFace(face)
	r.setColour(job.Object().PenColor())
	x, _ := r.point(job, p)
	y := s * -(p.Y() + span.YOffsetCenterLine() + span.YOffsetLayout())
	// Graphviz sized the box from Helvetica's widths; squeeze a wider line
	// of the Go font into the same width.
	want := span.Size().X() * s
	got, _ := r.ctx.MeasureString(text)
	anchor := 0.5
	switch span.Just() {
	case 'l':
		anchor = 0
	case 'r':
		anchor = 1
	}
	if got > want && want > 0 {
		r.ctx.ScaleAbout(want/got, 1, x, y)
	}
	r.ctx.DrawStringAnchored(text, x, y, anchor, 0)
	return nil
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

// faces caches font faces by weight and size.
var faces struct {
	sync.Mutex
	regular, bold *truetype.Font
	bySize        map[[2]float64]font.Face
}

func goFace(bold bool, size float64) (font.Face, error) {
	faces.Lock()
	defer faces.Unlock()
	if faces.bySize == nil {
		var err error
		if faces.regular, err = truetype.Parse(goregular.TTF); err != nil {
			return nil, err
		}
		if faces.bold, err = truetype.Parse(gobold.TTF); err != nil {
			return nil, err
		}
		faces.bySize = map[[2]float64]font.Face{}
	}
	key := [2]float64{0, size}
	ttf := faces.regular
	if bold {
		key[0], ttf = 1, faces.bold
	}
	face, ok := faces.bySize[key]
	if !ok {
		face = truetype.NewFace(ttf, &truetype.Options{Size: size, Hinting: font.HintingFull})
		faces.bySize[key] = face
	}
	return face, nil
}
