package crd

import (
	"fmt"
	"strconv"
	"strings"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/token"
)

// CUE's OpenAPI encoder handles plain fields, types, bounds, patterns, enums
// and references, but not validators such as matchN, the negations != and
// !~, struct.MinFields, comprehensions or pattern constraints with a
// constrained label. preprocess takes those out of the syntax tree before
// encoding and records each as a note; apply turns the notes back into the
// OpenAPI keywords a structural schema allows (anyOf, oneOf, not, required,
// minProperties, minItems) or into CEL rules. Anything it does not know how
// to translate is an error, so a schema change can never be dropped silently
// from the CRDs.

// noteKind says what a note adds back.
type noteKind int

const (
	// noteOneOf and noteAnyOf come from matchN(1, …) and matchN(>=1, …).
	noteOneOf noteKind = iota
	noteAnyOf
	// noteNotEnum and noteNotPattern come from != and !~.
	noteNotEnum
	noteNotPattern
	noteMinProperties
	noteMaxProperties
	noteMinItems
	// noteKeyPattern comes from a pattern constraint [#Label]: V; the keys of
	// the map must match the pattern of the referenced definition.
	noteKeyPattern
	// notePreserveUnknown comes from an open struct {...}.
	notePreserveUnknown
	// noteConditional comes from `if A == _|_ && B != _|_ {B: X}`: either A
	// is set, or B satisfies X.
	noteConditional
)

// A note is one constraint taken out of the syntax tree, attached to the
// schema at path inside definition def.
type note struct {
	kind noteKind
	def  string
	// path leads from the definition's schema to the constrained node:
	// a field name, "*" for additionalProperties, "[]" for items.
	path []string
	// alternatives holds, for oneOf and anyOf, one required field each and
	// the fragment its value must satisfy ("" for none).
	alternatives []alternative
	literal      any    // noteNotEnum
	text         string // pattern, referenced definition, or field name
	number       int64
	// fragment names the synthetic definition holding X of a conditional.
	fragment string
	present  string // the field whose presence settles a conditional
}

type alternative struct {
	field    string
	fragment string
}

// fragmentPrefix names the synthetic definitions preprocess adds so that the
// encoder translates the constraint values it took out.
const fragmentPrefix = "KncFragment"

type preprocessor struct {
	notes     []note
	fragments []*ast.Field
	errs      []error
}

func (p *preprocessor) errorf(def string, path []string, format string, args ...any) {
	where := "#" + def
	if len(path) > 0 {
		where += "." + strings.Join(path, ".")
	}
	p.errs = append(p.errs, fmt.Errorf("schema %s: %s", where, fmt.Sprintf(format, args...)))
}

func (p *preprocessor) add(n note) { p.notes = append(p.notes, n) }

// fragment records x as a synthetic definition and returns its name; "" when
// x constrains nothing.
func (p *preprocessor) fragment(x ast.Expr) string {
	if id, ok := x.(*ast.Ident); ok && id.Name == "_" {
		return ""
	}
	name := fragmentPrefix + strconv.Itoa(len(p.fragments))
	p.fragments = append(p.fragments, &ast.Field{Label: ast.NewIdent("#" + name), Value: x})
	return name
}

// file rewrites the definitions of one file in place.
func (p *preprocessor) file(f *ast.File) {
	for _, d := range f.Decls {
		field, ok := d.(*ast.Field)
		if !ok {
			continue
		}
		name, _, err := ast.LabelName(field.Label)
		if err != nil || !strings.HasPrefix(name, "#") {
			continue
		}
		def := strings.TrimPrefix(name, "#")
		field.Value = p.expr(def, nil, field.Value)
	}
}

// expr returns x without the constraints the encoder cannot handle.
func (p *preprocessor) expr(def string, path []string, x ast.Expr) ast.Expr {
	switch x := x.(type) {
	case *ast.CallExpr:
		if isIdent(x.Fun, "close") && len(x.Args) == 1 {
			// A structural schema is closed already: the API server prunes
			// unknown fields.
			return p.expr(def, path, x.Args[0])
		}
		return x
	case *ast.BinaryExpr:
		if x.Op != token.AND {
			return x
		}
		var kept []ast.Expr
		for _, term := range conjuncts(x) {
			if t := p.term(def, path, term); t != nil {
				kept = append(kept, t)
			}
		}
		if len(kept) == 0 {
			return ast.NewIdent("_")
		}
		out := kept[0]
		for _, t := range kept[1:] {
			out = &ast.BinaryExpr{X: out, Op: token.AND, Y: t}
		}
		return out
	case *ast.StructLit:
		p.structLit(def, path, x)
		return x
	case *ast.ListLit:
		return p.listLit(def, path, x)
	}
	return x
}

// term handles one conjunct of an & expression; nil drops it.
func (p *preprocessor) term(def string, path []string, x ast.Expr) ast.Expr {
	switch x := x.(type) {
	case *ast.UnaryExpr:
		switch x.Op {
		case token.NEQ:
			lit, err := literal(x.X)
			if err != nil {
				p.errorf(def, path, "!= needs a literal: %v", err)
				return nil
			}
			p.add(note{kind: noteNotEnum, def: def, path: path, literal: lit})
			return nil
		case token.NMAT:
			re, err := stringLiteral(x.X)
			if err != nil {
				p.errorf(def, path, "!~ needs a string literal: %v", err)
				return nil
			}
			p.add(note{kind: noteNotPattern, def: def, path: path, text: re})
			return nil
		}
	case *ast.CallExpr:
		switch {
		case isIdent(x.Fun, "matchN"):
			p.matchN(def, path, x)
			return nil
		case isSelector(x.Fun, "struct", "MinFields"), isSelector(x.Fun, "struct", "MaxFields"):
			n, err := intArg(x)
			if err != nil {
				p.errorf(def, path, "%v", err)
				return nil
			}
			kind := noteMinProperties
			if isSelector(x.Fun, "struct", "MaxFields") {
				kind = noteMaxProperties
			}
			p.add(note{kind: kind, def: def, path: path, number: n})
			return nil
		}
	}
	return p.expr(def, path, x)
}

// matchN translates matchN(1, alts) into oneOf and matchN(>=1, alts) into
// anyOf, where each alternative is {field!: X}.
func (p *preprocessor) matchN(def string, path []string, call *ast.CallExpr) {
	if len(call.Args) != 2 {
		p.errorf(def, path, "matchN needs two arguments")
		return
	}
	var kind noteKind
	switch n := call.Args[0].(type) {
	case *ast.BasicLit:
		if n.Value != "1" {
			p.errorf(def, path, "matchN(%s, …) has no OpenAPI form; use 1 or >=1", n.Value)
			return
		}
		kind = noteOneOf
	case *ast.UnaryExpr:
		lit, ok := n.X.(*ast.BasicLit)
		if n.Op != token.GEQ || !ok || lit.Value != "1" {
			p.errorf(def, path, "matchN's count has no OpenAPI form; use 1 or >=1")
			return
		}
		kind = noteAnyOf
	default:
		p.errorf(def, path, "matchN's count has no OpenAPI form; use 1 or >=1")
		return
	}
	list, ok := call.Args[1].(*ast.ListLit)
	if !ok {
		p.errorf(def, path, "matchN's alternatives must be a list literal")
		return
	}
	n := note{kind: kind, def: def, path: path}
	for _, e := range list.Elts {
		s, ok := e.(*ast.StructLit)
		if !ok || len(s.Elts) != 1 {
			p.errorf(def, path, "each matchN alternative must be {field!: value}")
			return
		}
		f, ok := s.Elts[0].(*ast.Field)
		if !ok || f.Constraint != token.NOT {
			p.errorf(def, path, "each matchN alternative must be {field!: value}")
			return
		}
		name, _, err := ast.LabelName(f.Label)
		if err != nil {
			p.errorf(def, path, "matchN alternative: %v", err)
			return
		}
		n.alternatives = append(n.alternatives, alternative{field: name, fragment: p.fragment(f.Value)})
	}
	p.add(n)
}

func (p *preprocessor) structLit(def string, path []string, s *ast.StructLit) {
	var kept []ast.Decl
	for _, d := range s.Elts {
		switch d := d.(type) {
		case *ast.Field:
			if l, ok := d.Label.(*ast.ListLit); ok {
				// A pattern constraint [K]: V. Only [string] has an OpenAPI
				// form (additionalProperties); the key's own pattern becomes
				// a CEL rule.
				p.patternConstraint(def, path, l)
				d.Value = p.expr(def, appendPath(path, "*"), d.Value)
				kept = append(kept, d)
				continue
			}
			name, _, err := ast.LabelName(d.Label)
			if err != nil {
				p.errorf(def, path, "field label: %v", err)
				continue
			}
			d.Value = p.expr(def, appendPath(path, name), d.Value)
		case *ast.Ellipsis:
			p.add(note{kind: notePreserveUnknown, def: def, path: path})
			continue
		case *ast.EmbedDecl:
			if call, ok := d.Expr.(*ast.CallExpr); ok && isIdent(call.Fun, "matchN") {
				p.matchN(def, path, call)
				continue
			}
		case *ast.Comprehension:
			p.comprehension(def, path, d)
			continue
		}
		kept = append(kept, d)
	}
	s.Elts = kept
}

func (p *preprocessor) patternConstraint(def string, path []string, l *ast.ListLit) {
	if len(l.Elts) != 1 {
		p.errorf(def, path, "a pattern constraint needs one label expression")
		return
	}
	switch k := l.Elts[0].(type) {
	case *ast.Ident:
		if k.Name == "string" {
			return
		}
		if strings.HasPrefix(k.Name, "#") {
			p.add(note{kind: noteKeyPattern, def: def, path: path, text: strings.TrimPrefix(k.Name, "#")})
			l.Elts[0] = ast.NewIdent("string")
			return
		}
	}
	p.errorf(def, path, "a pattern constraint must be [string] or [#Definition]")
}

// listLit turns [X, ...X] into [...X] with minItems 1, the form the encoder
// understands.
func (p *preprocessor) listLit(def string, path []string, l *ast.ListLit) ast.Expr {
	items := appendPath(path, "[]")
	switch len(l.Elts) {
	case 1:
		if e, ok := l.Elts[0].(*ast.Ellipsis); ok && e.Type != nil {
			e.Type = p.expr(def, items, e.Type)
			return l
		}
	case 2:
		e, ok := l.Elts[1].(*ast.Ellipsis)
		if ok && e.Type != nil && sameExpr(l.Elts[0], e.Type) {
			p.add(note{kind: noteMinItems, def: def, path: path, number: 1})
			e.Type = p.expr(def, items, e.Type)
			l.Elts = []ast.Expr{e}
			return l
		}
	}
	return l
}

// comprehension translates `if A == _|_ && B != _|_ {B: X}` and its
// equivalent `if A == _|_ {B?: X}`, which CUE evaluates where B also has a
// value of its own outside the comprehension.
func (p *preprocessor) comprehension(def string, path []string, c *ast.Comprehension) {
	fail := func() {
		p.errorf(def, path, "only `if A == _|_ && B != _|_ {B: X}` and `if A == _|_ {B?: X}` comprehensions can be translated")
	}
	if len(c.Clauses) != 1 {
		fail()
		return
	}
	clause, ok := c.Clauses[0].(*ast.IfClause)
	if !ok {
		fail()
		return
	}
	cond, ok := clause.Condition.(*ast.BinaryExpr)
	if !ok {
		fail()
		return
	}
	var absent, present string
	ok1, ok2 := false, false
	if cond.Op == token.LAND {
		absent, ok1 = bottomTest(cond.X, token.EQL)
		present, ok2 = bottomTest(cond.Y, token.NEQ)
	} else if absent, ok1 = bottomTest(cond, token.EQL); ok1 {
		ok2 = true
		if b, isStruct := c.Value.(*ast.StructLit); isStruct && len(b.Elts) == 1 {
			if f, isField := b.Elts[0].(*ast.Field); isField && f.Constraint == token.OPTION {
				present, _, _ = ast.LabelName(f.Label)
			}
		}
	}
	body, ok3 := c.Value.(*ast.StructLit)
	if !ok1 || !ok2 || !ok3 || len(body.Elts) != 1 {
		fail()
		return
	}
	f, ok := body.Elts[0].(*ast.Field)
	if !ok {
		fail()
		return
	}
	name, _, err := ast.LabelName(f.Label)
	if err != nil || name != present {
		fail()
		return
	}
	p.add(note{kind: noteConditional, def: def, path: path, present: absent, text: present, fragment: p.fragment(f.Value)})
}

// bottomTest matches `name OP _|_` and returns name.
func bottomTest(x ast.Expr, op token.Token) (string, bool) {
	b, ok := x.(*ast.BinaryExpr)
	if !ok || b.Op != op {
		return "", false
	}
	id, ok := b.X.(*ast.Ident)
	if !ok {
		return "", false
	}
	if _, ok := b.Y.(*ast.BottomLit); !ok {
		return "", false
	}
	return id.Name, true
}

func conjuncts(x ast.Expr) []ast.Expr {
	if b, ok := x.(*ast.BinaryExpr); ok && b.Op == token.AND {
		return append(conjuncts(b.X), conjuncts(b.Y)...)
	}
	if p, ok := x.(*ast.ParenExpr); ok {
		return conjuncts(p.X)
	}
	return []ast.Expr{x}
}

func isIdent(x ast.Expr, name string) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == name
}

func isSelector(x ast.Expr, pkg, name string) bool {
	s, ok := x.(*ast.SelectorExpr)
	if !ok || !isIdent(s.X, pkg) {
		return false
	}
	n, _, err := ast.LabelName(s.Sel)
	return err == nil && n == name
}

func sameExpr(a, b ast.Expr) bool {
	ia, ok1 := a.(*ast.Ident)
	ib, ok2 := b.(*ast.Ident)
	return ok1 && ok2 && ia.Name == ib.Name
}

func intArg(call *ast.CallExpr) (int64, error) {
	if len(call.Args) != 1 {
		return 0, fmt.Errorf("expected one argument")
	}
	lit, ok := call.Args[0].(*ast.BasicLit)
	if !ok || lit.Kind != token.INT {
		return 0, fmt.Errorf("expected an integer literal")
	}
	return strconv.ParseInt(lit.Value, 10, 64)
}

func stringLiteral(x ast.Expr) (string, error) {
	lit, ok := x.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", fmt.Errorf("not a string literal")
	}
	return strconv.Unquote(lit.Value)
}

func literal(x ast.Expr) (any, error) {
	lit, ok := x.(*ast.BasicLit)
	if !ok {
		return nil, fmt.Errorf("not a literal")
	}
	switch lit.Kind {
	case token.STRING:
		return strconv.Unquote(lit.Value)
	case token.INT:
		return strconv.ParseInt(lit.Value, 10, 64)
	}
	return nil, fmt.Errorf("unsupported literal %s", lit.Value)
}

func appendPath(path []string, seg string) []string {
	out := make([]string, len(path), len(path)+1)
	copy(out, path)
	return append(out, seg)
}
