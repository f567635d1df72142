package load

import (
	"fmt"
	"strconv"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"
	"cuelang.org/go/cue/parser"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/cueimport"
)

// parseCUE evaluates a CUE file on its own. A file whose value has a kind is
// one object; otherwise each top-level field (or list element) that has one
// is an object, so a file can hold a whole set.
func (c *chunk) parseCUE() {
	if c.refusedImports() {
		return
	}
	v := cuecontext.New().CompileBytes(c.text, cue.Filename(c.file))
	if err := v.Err(); err != nil {
		c.addCUEErrors(err)
		return
	}
	if err := v.Validate(cue.Concrete(true)); err != nil {
		c.addCUEErrors(err)
		return
	}
	if v.LookupPath(cue.ParsePath("kind")).Exists() {
		c.addCUEObject(v)
		return
	}
	var it interface {
		Next() bool
		Value() cue.Value
	}
	switch v.Kind() {
	case cue.StructKind:
		it, _ = v.Fields()
	case cue.ListKind:
		l, _ := v.List()
		it = &l
	default:
		c.diags.Add(c.pos(v), "", "a CUE manifest file must evaluate to an object, or to a struct or list of objects")
		return
	}
	for it.Next() {
		c.addCUEObject(it.Value())
	}
}

// refusedImports adds a diagnostic for each import of the file knc
// refuses, and reports whether there was one. Only the imports are
// parsed: a syntax error is left for the evaluation to report.
func (c *chunk) refusedImports() bool {
	f, err := parser.ParseFile(c.file, c.text, parser.ImportsOnly)
	if err != nil {
		return false
	}
	refused := false
	for spec := range f.ImportSpecs() {
		path, _ := strconv.Unquote(spec.Path.Value)
		if why := cueimport.Refused(path); why != "" {
			p := spec.Pos()
			c.diags.Add(diag.Pos{File: c.file, Line: p.Line(), Column: p.Column()}, "", "CUE manifest imports %q: %s", path, why)
			refused = true
		}
	}
	return refused
}

func (c *chunk) addCUEObject(v cue.Value) {
	if v.Kind() == cue.ListKind {
		l, _ := v.List()
		for l.Next() {
			c.addCUEObject(l.Value())
		}
		return
	}
	n, err := c.toNode(v)
	if err != nil {
		c.diags.Add(c.pos(v), "", "%v", err)
		return
	}
	c.addObject(n)
}

func (c *chunk) addCUEErrors(err error) {
	for _, e := range cueerrors.Errors(err) {
		pos := diag.Pos{File: c.file}
		p := e.Position()
		if !p.IsValid() {
			for _, in := range e.InputPositions() {
				if in.IsValid() && in.Filename() == c.file {
					p = in
					break
				}
			}
		}
		if p.IsValid() {
			pos = diag.Pos{File: c.file, Line: p.Line(), Column: p.Column()}
		}
		format, args := e.Msg()
		c.diags.Add(pos, pathString(e.Path()), format, args...)
	}
}

func pathString(p []string) string {
	s := ""
	for _, seg := range p {
		if _, err := strconv.Atoi(seg); err == nil {
			s = JoinIndex(s, mustAtoi(seg))
			continue
		}
		s = JoinKey(s, seg)
	}
	return s
}

func mustAtoi(s string) int {
	i, _ := strconv.Atoi(s)
	return i
}

func (c *chunk) pos(v cue.Value) diag.Pos {
	p := v.Pos()
	if !p.IsValid() {
		return diag.Pos{File: c.file}
	}
	return diag.Pos{File: c.file, Line: p.Line(), Column: p.Column()}
}

// toNode converts a concrete CUE value into a YAML node tree carrying the
// CUE source positions, so that later stages treat CUE and YAML alike.
func (c *chunk) toNode(v cue.Value) (*yaml.Node, error) {
	p := c.pos(v)
	n := &yaml.Node{Line: p.Line, Column: p.Column}
	switch v.Kind() {
	case cue.StructKind:
		n.Kind, n.Tag = yaml.MappingNode, "!!map"
		it, err := v.Fields()
		if err != nil {
			return nil, err
		}
		for it.Next() {
			val, err := c.toNode(it.Value())
			if err != nil {
				return nil, err
			}
			key := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: it.Selector().Unquoted(), Line: val.Line, Column: val.Column}
			n.Content = append(n.Content, key, val)
		}
	case cue.ListKind:
		n.Kind, n.Tag = yaml.SequenceNode, "!!seq"
		it, err := v.List()
		if err != nil {
			return nil, err
		}
		for it.Next() {
			val, err := c.toNode(it.Value())
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, val)
		}
	case cue.StringKind:
		s, _ := v.String()
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!str", s
	case cue.IntKind:
		i, err := v.Int64()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!int", strconv.FormatInt(i, 10)
	case cue.FloatKind, cue.NumberKind:
		f, err := v.Float64()
		if err != nil {
			return nil, err
		}
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!float", strconv.FormatFloat(f, 'g', -1, 64)
	case cue.BoolKind:
		b, _ := v.Bool()
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!bool", strconv.FormatBool(b)
	case cue.NullKind:
		n.Kind, n.Tag, n.Value = yaml.ScalarNode, "!!null", "null"
	default:
		return nil, fmt.Errorf("value of kind %v cannot be a manifest value", v.Kind())
	}
	return n, nil
}
