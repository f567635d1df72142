package project

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueerrors "cuelang.org/go/cue/errors"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/inputfs"
	"github.com/knc-dev/knc/schema"
)

// configSchema is #Config, compiled once. A cue.Context is not safe for
// concurrent use, so every use of it holds mu.
var configSchema struct {
	once sync.Once
	mu   sync.Mutex
	ctx  *cue.Context
	def  cue.Value
	err  error
}

func withSchema[T any](f func(ctx *cue.Context, def cue.Value) T) (T, error) {
	s := &configSchema
	s.once.Do(func() {
		s.ctx = cuecontext.New()
		v, err := schema.Compile(s.ctx)
		if err != nil {
			s.err = err
			return
		}
		s.def = v.LookupPath(cue.ParsePath("#Config"))
		if err := s.def.Err(); err != nil {
			s.err = fmt.Errorf("the embedded schema has no #Config: %w", err)
		}
	})
	var zero T
	if s.err != nil {
		return zero, s.err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return f(s.ctx, s.def), nil
}

// Default returns the config used when a project has no knc.yaml: #Config's
// defaults.
func Default() *Config {
	cfg, err := withSchema(func(ctx *cue.Context, def cue.Value) *Config {
		v := def.Unify(ctx.Encode(map[string]any{"apiVersion": APIVersion, "kind": Kind}))
		cfg := &Config{}
		if err := v.Decode(cfg); err != nil {
			panic(fmt.Sprintf("the defaults of #Config do not decode: %v", err))
		}
		return cfg
	})
	if err != nil {
		// The schema is embedded and compiled by every test of this
		// package: it cannot fail in a built binary.
		panic(err)
	}
	return cfg
}

// Read loads knc.yaml and reads it through #Config, which validates it and
// fills in its defaults. I/O errors are returned as err; problems with the
// content as diagnostics, at the position of the value or key they concern.
func Read(fsys inputfs.FS, file string) (*Config, diag.List, error) {
	loaded, err := load.ReadFiles(fsys, "", []string{file}, cuelimit.Default, nil)
	if err != nil {
		return nil, nil, err
	}
	docs, diags := loaded.Docs, loaded.Diags
	if len(diags) > 0 {
		return nil, diags, nil
	}
	if len(docs) != 1 {
		// Point at the second document, or at the top of an empty file.
		pos := diag.Pos{File: file, Line: 1, Column: 1}
		if len(docs) > 1 {
			pos = docs[1].PosOf("")
		}
		return nil, diag.List{{Pos: pos, Message: fmt.Sprintf("must hold exactly one document, found %d", len(docs))}}, nil
	}
	doc := docs[0]
	data, err := doc.Generic()
	if err != nil {
		return nil, diag.List{{Pos: doc.PosOf(""), Message: err.Error()}}, nil
	}
	type result struct {
		cfg   *Config
		diags diag.List
	}
	r, err := withSchema(func(ctx *cue.Context, def cue.Value) result {
		in := ctx.Encode(withoutNulls(data))
		v := def.Unify(in)
		if err := v.Validate(cue.Concrete(true)); err != nil {
			return result{diags: describe(doc, def, in, err)}
		}
		cfg := &Config{}
		if err := v.Decode(cfg); err != nil {
			return result{diags: diag.List{{Pos: doc.PosOf(""), Message: fmt.Sprintf("decoding the config: %v", err)}}}
		}
		return result{cfg: cfg}
	})
	if err != nil {
		return nil, nil, err
	}
	if r.diags != nil {
		return nil, r.diags, nil
	}
	cfg := r.cfg
	cfg.File = file
	var errs model.FieldErrors
	cfg.checkRules(&errs)
	for _, e := range errs {
		diags = append(diags, diag.Diagnostic{Pos: doc.PosOf(e.Path), Path: e.Path, Message: e.Message})
	}
	if len(diags) > 0 {
		return nil, diags, nil
	}
	return cfg, nil, nil
}

// checkRules makes the checks #Config names with @knc(rule=NAME) and
// cannot state itself.
func (c *Config) checkRules(errs *model.FieldErrors) {
	for i, e := range c.Exclude {
		// rule=pattern
		if _, err := filepath.Match(e, ""); err != nil {
			errs.Add(fmt.Sprintf("exclude[%d]", i), "%q is not a valid pattern: %v", e, err)
		}
	}
}

// withoutNulls drops the fields whose value is null, as the loader reads
// null as absent, as the API server does; it turns numbers into int64 or
// float64, which CUE reads as numbers.
func withoutNulls(x any) any {
	switch x := x.(type) {
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, v := range x {
			if v != nil {
				out[k] = withoutNulls(v)
			}
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, v := range x {
			out[i] = withoutNulls(v)
		}
		return out
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	}
	return x
}

// describe turns the errors of unifying the config in with the schema def
// into diagnostics worded by the schema: a field's @knc(error=FORMAT), its
// literals, or what it requires.
func describe(doc *load.Document, def, in cue.Value, err error) diag.List {
	var out diag.List
	seen := map[string]bool{}
	// CUE leaves out the fields a closed struct refuses when a field
	// beside them fails, so these are found by a walk of their own.
	for _, sels := range unknownFields(def, in, nil) {
		path := ""
		for _, s := range sels {
			path = joinSelector(path, s)
		}
		seen[path] = true
		msg, keyOfMap := unknownField(def, sels)
		d := diag.Diagnostic{Pos: doc.PosOf(path), Path: path, Message: msg}
		// A field no struct has is shown at its key; a key a map's
		// pattern refuses, at its value, as Kubernetes shows an entry.
		if p, ok := doc.KeyPos(path); ok && !keyOfMap {
			d.Pos = p
		}
		out = append(out, d)
	}
	for _, e := range cueerrors.Errors(err) {
		sels, path := selectors(e.Path())
		if seen[path] {
			continue
		}
		seen[path] = true
		d := diag.Diagnostic{Pos: doc.PosOf(path), Path: path}
		d.Message = message(def, in, sels, e)
		out = append(out, d)
	}
	return out
}

var identifier = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// selectors turns a CUE error path into selectors and the field path knc
// prints, runtime.tracing.headers[bad header].
func selectors(segs []string) ([]cue.Selector, string) {
	var sels []cue.Selector
	path := ""
	if len(segs) > 0 && segs[0] == "#Config" {
		segs = segs[1:]
	}
	for _, s := range segs {
		if i, err := strconv.Atoi(s); err == nil {
			sels = append(sels, cue.Index(i))
			path = load.JoinIndex(path, i)
			continue
		}
		if u, err := strconv.Unquote(s); err == nil {
			s = u
		}
		sels = append(sels, cue.Str(s))
		path = joinSelector(path, cue.Str(s))
	}
	return sels, path
}

// joinSelector appends s to the field path.
func joinSelector(path string, s cue.Selector) string {
	if s.Type() == cue.IndexLabel {
		return load.JoinIndex(path, s.Index())
	}
	name := s.Unquoted()
	if !identifier.MatchString(name) {
		// A key of a map, features[new-trigger-filters], as Kubernetes
		// writes field paths.
		return path + "[" + name + "]"
	}
	return load.JoinKey(path, name)
}

// unknownFields returns the paths of the fields of in, below at, that the
// schema has no place for.
func unknownFields(def, in cue.Value, at []cue.Selector) [][]cue.Selector {
	var out [][]cue.Selector
	switch in.Kind() {
	case cue.StructKind:
		for it, _ := in.Fields(); it != nil && it.Next(); {
			sels := append(slices.Clone(at), cue.Str(it.Selector().Unquoted()))
			field, ok := schemaField(def, sels)
			if !ok {
				out = append(out, sels)
				continue
			}
			if field.IncompleteKind()&(cue.StructKind|cue.ListKind) != 0 {
				out = append(out, unknownFields(def, it.Value(), sels)...)
			}
		}
	case cue.ListKind:
		l, _ := in.List()
		for i := 0; l.Next(); i++ {
			out = append(out, unknownFields(def, l.Value(), append(slices.Clone(at), cue.Index(i)))...)
		}
	}
	return out
}

// schemaField returns the schema of the field at sels: a declared field,
// optional or required, or the pattern of a map or the element of a list.
func schemaField(def cue.Value, sels []cue.Selector) (cue.Value, bool) {
	v := def
	for _, s := range sels {
		next, ok := schemaChild(v, s)
		if !ok {
			return cue.Value{}, false
		}
		v = next
	}
	return v, true
}

func schemaChild(v cue.Value, s cue.Selector) (cue.Value, bool) {
	if s.Type() == cue.IndexLabel {
		c := v.LookupPath(cue.MakePath(cue.AnyIndex))
		return c, c.Exists()
	}
	for _, sel := range []cue.Selector{s, s.Optional(), s.Required()} {
		if c := v.LookupPath(cue.MakePath(sel)); c.Exists() {
			return c, true
		}
	}
	// A field a pattern admits: the pattern's value.
	if !v.Allows(s) {
		return cue.Value{}, false
	}
	c := v.LookupPath(cue.MakePath(cue.AnyString))
	return c, c.Exists()
}

// message words the error e at sels.
func message(def, in cue.Value, sels []cue.Selector, e cueerrors.Error) string {
	field, ok := schemaField(def, sels)
	if !ok {
		msg, _ := unknownField(def, sels)
		return msg
	}
	attr := field.Attribute("knc")
	if last := sels[len(sels)-1]; last.Type() == cue.IndexLabel && attr.Err() != nil {
		// A list's attributes are its elements'.
		if list, ok := schemaField(def, sels[:len(sels)-1]); ok {
			attr = list.Attribute("knc")
		}
	}
	value := in.LookupPath(cue.MakePath(sels...))
	if !value.Exists() {
		if text, found, _ := attr.Lookup(0, "required"); found {
			return "is required: " + text
		}
		return "is required"
	}
	if want := field.IncompleteKind(); value.Kind()&want == 0 && want != cue.BottomKind {
		return fmt.Sprintf("must be %s, not %s", kindName(want), describeValue(value))
	}
	if format, found, _ := attr.Lookup(0, "error"); found {
		if !strings.Contains(format, "%") {
			return format
		}
		return fmt.Sprintf(format, goValue(value))
	}
	if field.IsConcrete() {
		return fmt.Sprintf("must be %s, not %s", literal(field), describeValue(value))
	}
	if literals := literalsOf(field); len(literals) > 0 {
		return fmt.Sprintf("must be %s, not %s", orList(literals), describeValue(value))
	}
	format, args := e.Msg()
	return fmt.Sprintf(format, args...)
}

// unknownField says which fields the struct around sels has, and whether
// it is a map whose pattern refused the key.
func unknownField(def cue.Value, sels []cue.Selector) (msg string, keyOfMap bool) {
	name := sels[len(sels)-1].Unquoted()
	parent, ok := schemaField(def, sels[:len(sels)-1])
	if !ok {
		return fmt.Sprintf("unknown field %q", name), false
	}
	attr := parent.Attribute("knc")
	if format, found, _ := attr.Lookup(0, "key"); found {
		return fmt.Sprintf(format, name), true
	}
	var known []string
	for it, _ := parent.Fields(cue.Optional(true)); it != nil && it.Next(); {
		known = append(known, it.Selector().Unquoted())
	}
	slices.Sort(known)
	return fmt.Sprintf("unknown field %q%s", name, load.SuggestField(name, known)), false
}

// literalsOf returns the literals a field is a disjunction of, nil when it
// is anything else.
func literalsOf(v cue.Value) []string {
	op, args := v.Expr()
	if op != cue.OrOp {
		return nil
	}
	var out []string
	for _, a := range args {
		if !a.IsConcrete() || a.Kind() == cue.StructKind || a.Kind() == cue.ListKind {
			return nil
		}
		out = append(out, literal(a))
	}
	return out
}

// literal writes a concrete value as knc.yaml would hold it, a string
// quoted.
func literal(v cue.Value) string {
	if s, err := v.String(); err == nil {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

func orList(items []string) string {
	if len(items) <= 2 {
		return strings.Join(items, " or ")
	}
	return strings.Join(items[:len(items)-1], ", ") + " or " + items[len(items)-1]
}

func kindName(k cue.Kind) string {
	switch {
	case k&cue.StructKind != 0:
		return "an object"
	case k&cue.ListKind != 0:
		return "a list"
	case k == cue.IntKind:
		return "an integer"
	case k&cue.NumberKind != 0:
		return "a number"
	case k&cue.StringKind != 0:
		return "a string"
	case k&cue.BoolKind != 0:
		return "true or false"
	}
	return k.String()
}

func describeValue(v cue.Value) string {
	switch v.Kind() {
	case cue.StructKind:
		return "an object"
	case cue.ListKind:
		return "a list"
	case cue.StringKind:
		s, _ := v.String()
		return strconv.Quote(s)
	case cue.IntKind:
		return "the integer " + fmt.Sprint(v)
	case cue.FloatKind, cue.NumberKind:
		return "the number " + fmt.Sprint(v)
	case cue.BoolKind:
		return "the boolean " + fmt.Sprint(v)
	}
	return fmt.Sprint(v)
}

// goValue is v as a Go value, for the verb of an error's format.
func goValue(v cue.Value) any {
	switch v.Kind() {
	case cue.StringKind:
		s, _ := v.String()
		return s
	case cue.IntKind:
		if i, err := v.Int64(); err == nil {
			return i
		}
	case cue.FloatKind, cue.NumberKind:
		if f, err := v.Float64(); err == nil {
			return f
		}
	case cue.BoolKind:
		b, _ := v.Bool()
		return b
	}
	return fmt.Sprint(v)
}
