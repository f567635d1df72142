package crd

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"cuelang.org/go/cue/ast"
	"cuelang.org/go/cue/build"
	"cuelang.org/go/cue/cuecontext"
	"cuelang.org/go/cue/parser"
	"cuelang.org/go/encoding/openapi"

	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/schema"
)

// recursionDepth bounds how often a recursive definition is expanded inside
// itself: a structural schema cannot refer to itself. Trigger filters nest
// all, any and not this deep with full validation; deeper levels are kept
// as they are written (x-kubernetes-preserve-unknown-fields) and checked by
// knc validate only.
const recursionDepth = 3

// schemaNode is a JSON schema as generic JSON.
type schemaNode = map[string]any

var generated struct {
	once    sync.Once
	schemas map[string]schemaNode
	err     error
}

// schemas generates the structural schema of each kind once per process;
// the embedded CUE never changes while it runs.
func schemas() (map[string]schemaNode, error) {
	generated.once.Do(func() {
		generated.schemas, generated.err = generate()
	})
	if generated.err != nil {
		return nil, generated.err
	}
	out := make(map[string]schemaNode, len(generated.schemas))
	for k, v := range generated.schemas {
		out[k] = deepCopy(v).(schemaNode)
	}
	return out, nil
}

func generate() (map[string]schemaNode, error) {
	names, data, err := schema.Files()
	if err != nil {
		return nil, err
	}
	var p preprocessor
	var files []*ast.File
	for _, name := range names {
		if name == schema.ConfigFile {
			// knc.yaml's schema is no CRD's, and uses what OpenAPI
			// cannot say (defaults of disjunctions of patterns).
			continue
		}
		f, err := parser.ParseFile("schema/"+name, data[name], parser.ParseComments)
		if err != nil {
			return nil, fmt.Errorf("parsing embedded schema: %w", err)
		}
		p.file(f)
		files = append(files, f)
	}
	if len(p.errs) > 0 {
		return nil, fmt.Errorf("translating the CUE schema to OpenAPI: %w", errors.Join(p.errs...))
	}
	// The fragments go into a file of their own in the same package, which
	// sees every definition.
	frag := &ast.File{Decls: []ast.Decl{&ast.Package{Name: ast.NewIdent("schema")}}}
	for _, f := range p.fragments {
		frag.Decls = append(frag.Decls, f)
	}
	files = append(files, frag)
	for _, f := range files {
		dropUnusedImports(f)
	}

	ctx := cuecontext.New()
	inst := build.NewContext().NewInstance("schema", nil)
	for _, f := range files {
		if err := inst.AddSyntax(f); err != nil {
			return nil, fmt.Errorf("building the schema for OpenAPI: %w", err)
		}
	}
	v := ctx.BuildInstance(inst)
	if err := v.Err(); err != nil {
		return nil, fmt.Errorf("building the schema for OpenAPI: %w", err)
	}
	doc, err := openapi.Generate(v, &openapi.Config{
		Info:    map[string]any{"title": "knc", "version": "v1"},
		Version: "3.0.0",
	})
	if err != nil {
		return nil, fmt.Errorf("encoding the schema as OpenAPI: %w", err)
	}
	docValue := ctx.BuildFile(doc)
	raw, err := docValue.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encoding the schema as OpenAPI: %w", err)
	}
	var parsed struct {
		Components struct {
			Schemas map[string]schemaNode `json:"schemas"`
		} `json:"components"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&parsed); err != nil {
		return nil, fmt.Errorf("reading the generated OpenAPI: %w", err)
	}
	g := &generator{components: parsed.Components.Schemas}
	for _, n := range p.notes {
		if err := g.apply(n); err != nil {
			return nil, err
		}
	}
	out := map[string]schemaNode{}
	for _, k := range knative.Kinds {
		kind := k.Name
		if _, ok := g.components[kind]; !ok {
			return nil, fmt.Errorf("the schema defines no #%s", kind)
		}
		s, err := g.expand(schemaNode{"$ref": refPrefix + kind}, nil)
		if err != nil {
			return nil, fmt.Errorf("expanding #%s: %w", kind, err)
		}
		root(s)
		dropKeyRulesInLists(s, false)
		if err := checkStructural(s, kind); err != nil {
			return nil, err
		}
		out[kind] = s
	}
	return out, nil
}

// dropUnusedImports removes imports that preprocessing left unreferenced,
// which CUE reports as errors.
func dropUnusedImports(f *ast.File) {
	used := map[string]bool{}
	ast.Walk(f, func(n ast.Node) bool {
		if s, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := s.X.(*ast.Ident); ok {
				used[id.Name] = true
			}
		}
		return true
	}, nil)
	var decls []ast.Decl
	for _, d := range f.Decls {
		imp, ok := d.(*ast.ImportDecl)
		if !ok {
			decls = append(decls, d)
			continue
		}
		var specs []*ast.ImportSpec
		for _, s := range imp.Specs {
			path := strings.Trim(s.Path.Value, `"`)
			name := path[strings.LastIndex(path, "/")+1:]
			if s.Name != nil {
				name = s.Name.Name
			}
			if used[name] {
				specs = append(specs, s)
			}
		}
		if len(specs) > 0 {
			imp.Specs = specs
			decls = append(decls, imp)
		}
	}
	f.Decls = decls
}

const refPrefix = "#/components/schemas/"

type generator struct {
	components map[string]schemaNode
}

// at returns the node at path inside definition def.
func (g *generator) at(def string, path []string) (schemaNode, error) {
	n, ok := g.components[def]
	if !ok {
		return nil, fmt.Errorf("no OpenAPI schema was generated for #%s", def)
	}
	for _, seg := range path {
		var next any
		switch seg {
		case "*":
			next = n["additionalProperties"]
		case "[]":
			next = n["items"]
		default:
			props, _ := n["properties"].(schemaNode)
			next = props[seg]
		}
		m, ok := next.(schemaNode)
		if !ok {
			return nil, fmt.Errorf("#%s.%s: no schema at %q", def, strings.Join(path, "."), seg)
		}
		n = m
	}
	return n, nil
}

// fragment returns the value validations of a synthetic definition: the
// form anyOf, oneOf and not may hold in a structural schema.
func (g *generator) fragment(name string) (schemaNode, error) {
	if name == "" {
		return schemaNode{}, nil
	}
	s, err := g.expand(schemaNode{"$ref": refPrefix + name}, nil)
	if err != nil {
		return nil, err
	}
	return valueValidations(s), nil
}

func (g *generator) apply(n note) error {
	node, err := g.at(n.def, n.path)
	if err != nil {
		return err
	}
	switch n.kind {
	case noteOneOf, noteAnyOf:
		var alts []any
		for _, a := range n.alternatives {
			alt := schemaNode{"required": []any{a.field}}
			frag, err := g.fragment(a.fragment)
			if err != nil {
				return err
			}
			if len(frag) > 0 {
				alt["properties"] = schemaNode{a.field: frag}
			}
			alts = append(alts, alt)
		}
		key := "oneOf"
		if n.kind == noteAnyOf {
			key = "anyOf"
		}
		addLogical(node, key, alts)
	case noteNotEnum:
		addLogical(node, "allOf", []any{schemaNode{"not": schemaNode{"enum": []any{n.literal}}}})
	case noteNotPattern:
		addLogical(node, "allOf", []any{schemaNode{"not": schemaNode{"pattern": n.text}}})
	case noteMinProperties:
		node["minProperties"] = json.Number(fmt.Sprint(n.number))
	case noteMaxProperties:
		node["maxProperties"] = json.Number(fmt.Sprint(n.number))
	case noteMinItems:
		node["minItems"] = json.Number(fmt.Sprint(n.number))
	case notePreserveUnknown:
		node["x-kubernetes-preserve-unknown-fields"] = true
	case noteKeyPattern:
		key, ok := g.components[n.text]
		pattern, _ := key["pattern"].(string)
		if !ok || pattern == "" {
			return fmt.Errorf("#%s: keys must match #%s, which has no pattern", n.def, n.text)
		}
		addRule(node, rule{
			Rule:    fmt.Sprintf("self.all(k, k.matches(%s))", celString(pattern)),
			Message: keyRuleMessage + pattern,
		})
	case noteConditional:
		frag, err := g.fragment(n.fragment)
		if err != nil {
			return err
		}
		addLogical(node, "anyOf", []any{
			schemaNode{"required": []any{n.present}},
			schemaNode{"properties": schemaNode{n.text: frag}},
		})
	}
	return nil
}

// keyRuleMessage starts the message of the rules that check map keys.
const keyRuleMessage = "keys must match "

// dropKeyRulesInLists removes key rules from maps inside lists. The API
// server estimates a rule's worst-case cost from the largest request it
// accepts; a regular expression over a key of unknown length, in every
// element of a list of unknown length, exceeds its budget. Those keys are
// checked by knc validate only.
func dropKeyRulesInLists(n schemaNode, inList bool) {
	if inList {
		var kept []any
		for _, r := range asList(n["x-kubernetes-validations"]) {
			if msg, _ := r.(schemaNode)["message"].(string); !strings.HasPrefix(msg, keyRuleMessage) {
				kept = append(kept, r)
			}
		}
		if len(kept) > 0 {
			n["x-kubernetes-validations"] = kept
		} else {
			delete(n, "x-kubernetes-validations")
		}
	}
	if m, ok := n["items"].(schemaNode); ok {
		dropKeyRulesInLists(m, true)
	}
	if m, ok := n["additionalProperties"].(schemaNode); ok {
		dropKeyRulesInLists(m, inList)
	}
	if props, ok := n["properties"].(schemaNode); ok {
		for _, p := range props {
			dropKeyRulesInLists(p.(schemaNode), inList)
		}
	}
}

// addLogical adds alternatives under key. A second anyOf or oneOf on the
// same node goes into allOf, so that both hold.
func addLogical(node schemaNode, key string, alts []any) {
	if key == "allOf" {
		existing, _ := node["allOf"].([]any)
		node["allOf"] = append(existing, alts...)
		return
	}
	if _, taken := node[key]; !taken {
		node[key] = alts
		return
	}
	existing, _ := node["allOf"].([]any)
	node["allOf"] = append(existing, schemaNode{key: alts})
}

// rule is one x-kubernetes-validations entry.
type rule struct {
	Rule    string `json:"rule"`
	Message string `json:"message,omitempty"`
	Reason  string `json:"reason,omitempty"`
	// FieldPath points the error at a field below the node.
	FieldPath string `json:"fieldPath,omitempty"`
}

func addRule(node schemaNode, r rule) {
	existing, _ := node["x-kubernetes-validations"].([]any)
	node["x-kubernetes-validations"] = append(existing, schemaNode{"rule": r.Rule, "message": r.Message})
	if r.Reason != "" || r.FieldPath != "" {
		last := node["x-kubernetes-validations"].([]any)
		m := last[len(last)-1].(schemaNode)
		if r.Reason != "" {
			m["reason"] = r.Reason
		}
		if r.FieldPath != "" {
			m["fieldPath"] = r.FieldPath
		}
	}
}

// celString quotes s as a CEL raw string literal when it can, so regular
// expressions need no second level of escaping.
func celString(s string) string {
	if !strings.Contains(s, "'") {
		return "r'" + s + "'"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// expand inlines every $ref, and merges allOf entries that are references
// (CUE embeddings) into the node itself: a structural schema has neither.
// stack holds the definitions being expanded, to bound recursion.
func (g *generator) expand(n schemaNode, stack []string) (schemaNode, error) {
	if ref, ok := n["$ref"].(string); ok {
		name := strings.TrimPrefix(ref, refPrefix)
		target, ok := g.components[name]
		if !ok {
			return nil, fmt.Errorf("unresolved reference %s", ref)
		}
		depth := 0
		for _, s := range stack {
			if s == name {
				depth++
			}
		}
		if depth >= recursionDepth {
			// Deeper levels are kept as written.
			t, _ := target["type"].(string)
			return schemaNode{"type": t, "x-kubernetes-preserve-unknown-fields": true}, nil
		}
		merged := deepCopy(target).(schemaNode)
		for k, v := range n {
			if k != "$ref" {
				merged[k] = deepCopy(v)
			}
		}
		return g.expand(merged, append(stack, name))
	}
	out := schemaNode{}
	for k, v := range n {
		out[k] = v
	}
	if all, ok := out["allOf"].([]any); ok {
		var rest []any
		for _, item := range all {
			m, _ := item.(schemaNode)
			if _, isRef := m["$ref"]; !isRef {
				rest = append(rest, item)
				continue
			}
			embedded, err := g.expand(m, stack)
			if err != nil {
				return nil, err
			}
			mergeInto(out, embedded)
		}
		if len(rest) > 0 {
			out["allOf"] = rest
		} else {
			delete(out, "allOf")
		}
	}
	for _, key := range []string{"items", "additionalProperties", "not"} {
		if m, ok := out[key].(schemaNode); ok {
			e, err := g.expand(m, stack)
			if err != nil {
				return nil, err
			}
			out[key] = e
		}
	}
	if props, ok := out["properties"].(schemaNode); ok {
		expanded := schemaNode{}
		for name, p := range props {
			m, ok := p.(schemaNode)
			if !ok {
				return nil, fmt.Errorf("property %s is not a schema", name)
			}
			e, err := g.expand(m, stack)
			if err != nil {
				return nil, err
			}
			expanded[name] = e
		}
		out["properties"] = expanded
	}
	for _, key := range []string{"allOf", "anyOf", "oneOf"} {
		if list, ok := out[key].([]any); ok {
			var expanded []any
			for _, item := range list {
				m, _ := item.(schemaNode)
				e, err := g.expand(m, stack)
				if err != nil {
					return nil, err
				}
				expanded = append(expanded, e)
			}
			out[key] = expanded
		}
	}
	return out, nil
}

// mergeInto adds an embedded definition's properties and constraints.
func mergeInto(dst, src schemaNode) {
	for k, v := range src {
		switch k {
		case "properties":
			props, _ := dst["properties"].(schemaNode)
			if props == nil {
				props = schemaNode{}
			}
			for name, p := range v.(schemaNode) {
				if _, ok := props[name]; !ok {
					props[name] = p
				}
			}
			dst["properties"] = props
		case "required":
			req, _ := dst["required"].([]any)
			for _, r := range v.([]any) {
				if !slices.Contains(req, r) {
					req = append(req, r)
				}
			}
			dst["required"] = req
		case "description":
		default:
			if _, ok := dst[k]; !ok {
				dst[k] = v
			}
		}
	}
}

// valueValidations strips what a structural schema forbids inside anyOf,
// oneOf, allOf and not: types, descriptions, defaults, nullable and
// additionalProperties.
func valueValidations(n schemaNode) schemaNode {
	out := schemaNode{}
	for k, v := range n {
		switch k {
		case "type", "description", "title", "default", "nullable", "additionalProperties",
			"x-kubernetes-preserve-unknown-fields", "x-kubernetes-validations":
			continue
		case "properties":
			props := schemaNode{}
			for name, p := range v.(schemaNode) {
				if vv := valueValidations(p.(schemaNode)); len(vv) > 0 {
					props[name] = vv
				}
			}
			if len(props) > 0 {
				out[k] = props
			}
		case "items", "not":
			if vv := valueValidations(v.(schemaNode)); len(vv) > 0 {
				out[k] = vv
			}
		case "allOf", "anyOf", "oneOf":
			var list []any
			for _, item := range v.([]any) {
				list = append(list, valueValidations(item.(schemaNode)))
			}
			out[k] = list
		default:
			out[k] = v
		}
	}
	return out
}

// root adapts a kind's schema to what the API server expects at the top:
// it manages apiVersion, kind and metadata itself.
func root(s schemaNode) {
	props, _ := s["properties"].(schemaNode)
	props["metadata"] = schemaNode{"type": "object"}
	for _, k := range []string{"apiVersion", "kind"} {
		props[k] = schemaNode{"type": "string"}
	}
	var req []any
	for _, r := range asList(s["required"]) {
		if r != "apiVersion" && r != "kind" && r != "metadata" {
			req = append(req, r)
		}
	}
	if len(req) > 0 {
		s["required"] = req
	} else {
		delete(s, "required")
	}
	stripDefinitionDescriptions(s)
}

// stripDefinitionDescriptions removes descriptions that document the CUE
// definitions ("#Name is …") rather than the field; they read oddly in
// kubectl explain.
func stripDefinitionDescriptions(n schemaNode) {
	if d, ok := n["description"].(string); ok && strings.HasPrefix(d, "#") {
		delete(n, "description")
	}
	walkChildren(n, stripDefinitionDescriptions)
}

func walkChildren(n schemaNode, fn func(schemaNode)) {
	for _, k := range []string{"items", "additionalProperties", "not"} {
		if m, ok := n[k].(schemaNode); ok {
			fn(m)
		}
	}
	if props, ok := n["properties"].(schemaNode); ok {
		for _, p := range props {
			fn(p.(schemaNode))
		}
	}
	for _, k := range []string{"allOf", "anyOf", "oneOf"} {
		for _, item := range asList(n[k]) {
			fn(item.(schemaNode))
		}
	}
}

// checkStructural reports nodes of the core schema without a type, which
// the API server would refuse.
func checkStructural(n schemaNode, where string) error {
	var errs []error
	var walk func(n schemaNode, path string)
	walk = func(n schemaNode, path string) {
		if _, ok := n["type"].(string); !ok || n["type"] == "" {
			errs = append(errs, fmt.Errorf("%s: no type", path))
		}
		if m, ok := n["items"].(schemaNode); ok {
			walk(m, path+"[]")
		}
		if m, ok := n["additionalProperties"].(schemaNode); ok {
			walk(m, path+"[*]")
		}
		if props, ok := n["properties"].(schemaNode); ok {
			keys := make([]string, 0, len(props))
			for k := range props {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(props[k].(schemaNode), path+"."+k)
			}
		}
	}
	walk(n, where)
	if len(errs) > 0 {
		return fmt.Errorf("the generated schema is not structural: %w", errors.Join(errs...))
	}
	return nil
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func deepCopy(v any) any {
	switch v := v.(type) {
	case schemaNode:
		out := make(schemaNode, len(v))
		for k, x := range v {
			out[k] = deepCopy(x)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, x := range v {
			out[i] = deepCopy(x)
		}
		return out
	}
	return v
}
