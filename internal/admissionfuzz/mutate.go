package admissionfuzz

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Mutation is one change made to a seed.
type Mutation struct {
	Op     string // the operator, one of Ops
	Path   string // the field it changed, as spec.delivery.retry
	Detail string // what it did there
}

func (m Mutation) String() string { return m.Op + " " + m.Path + ": " + m.Detail }

// Case is one generated manifest.
type Case struct {
	Seed      uint64
	Index     int
	Kind      string
	Base      string // the name of the Seed it started from
	Mutations []Mutation
	Doc       *yaml.Node // the document's root mapping
	mutated   []*yaml.Node
}

// ID names the case by seed and index.
func (c *Case) ID() string { return fmt.Sprintf("%d-%05d", c.Seed, c.Index) }

// Ops returns the operators applied, joined by "+".
func (c *Case) Ops() string {
	ops := make([]string, len(c.Mutations))
	for i, m := range c.Mutations {
		ops[i] = m.Op
	}
	return strings.Join(ops, "+")
}

// YAML renders the case.
func (c *Case) YAML() []byte {
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(c.Doc); err != nil {
		// The tree is built here from parsed seeds and scalars, so the
		// encoder has nothing it cannot write.
		panic(fmt.Sprintf("admissionfuzz: encoding case %s: %v", c.ID(), err))
	}
	return b.Bytes()
}

// Provenance is the comment a reproducer carries.
func (c *Case) Provenance() string {
	var b strings.Builder
	for _, m := range c.Mutations {
		fmt.Fprintf(&b, "# from: mutation %s of %s, seed %d case %d\n", m, c.Base, c.Seed, c.Index)
	}
	return b.String()
}

// keepDeadLetteredValues are values of knc.dev/keep-dead-lettered, knc's
// own annotation: the two it admits and some it refuses.
var keepDeadLetteredValues = []string{"true", "false", "True", "yes", "1", "", " true"}

// Ops are the mutation operators.
var Ops = []string{
	"absent", "empty", "null", "wrong-type", "wrong-case", "length", "chars",
	"yaml11", "number", "unknown-field", "nonsense", "status", "meta", "cesql",
	"source",
}

// weightedOps makes the operators that nearly always give an object
// Knative refuses half as likely as the others, so that about half of the
// inputs are refused and both verdicts are tested.
var weightedOps = func() []string {
	var out []string
	for _, op := range Ops {
		if op == "source" {
			// Only the generator of the sources and flows uses it.
			continue
		}
		out = append(out, op)
		switch op {
		case "wrong-type", "nonsense", "unknown-field", "chars", "yaml11", "length":
		default:
			out = append(out, op)
		}
	}
	return out
}()

// Generator derives cases from the seeds.
type Generator struct {
	seed  uint64
	seeds []Seed
	ops   []string
	roots []*yaml.Node
}

// NewGenerator returns the generator of seed over Seeds, the four core
// kinds.
func NewGenerator(seed uint64) *Generator { return newGenerator(seed, Seeds, weightedOps) }

// NewSourceGenerator returns the generator of seed over SourceSeeds, the
// sources and flows, with the operator that sets their fields to values
// Knative's validation of them decides on.
func NewSourceGenerator(seed uint64) *Generator {
	return newGenerator(seed, SourceSeeds, append(slices.Clone(weightedOps), "source", "source", "source"))
}

func newGenerator(seed uint64, seeds []Seed, ops []string) *Generator {
	g := &Generator{seed: seed, seeds: seeds, ops: ops}
	for _, s := range seeds {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(s.YAML), &doc); err != nil {
			panic(fmt.Sprintf("admissionfuzz: seed %s: %v", s.Name, err))
		}
		g.roots = append(g.roots, doc.Content[0])
	}
	return g
}

// Case returns case i: the same for the same seed and i, whatever was
// generated before.
func (g *Generator) Case(i int) *Case {
	r := rand.New(rand.NewPCG(g.seed, uint64(i)))
	s := r.IntN(len(g.seeds))
	c := &Case{Seed: g.seed, Index: i, Kind: g.seeds[s].Kind, Base: g.seeds[s].Name, Doc: clone(g.roots[s], nil)}
	n := 1
	if r.IntN(10) < 2 {
		n = 2
	}
	for len(c.Mutations) < n {
		op := g.ops[r.IntN(len(g.ops))]
		if m, ok := apply(r, c, op); ok {
			c.Mutations = append(c.Mutations, m)
		}
	}
	return c
}

// Seed returns the seed of that name, unchanged, as a case.
func (g *Generator) Seed(name string) *Case {
	for i, s := range g.seeds {
		if s.Name == name {
			return &Case{Seed: g.seed, Index: -1, Kind: s.Kind, Base: s.Name, Doc: clone(g.roots[i], nil)}
		}
	}
	return nil
}

// Graft puts v in place of the field, list item or subtree selector
// picks (modulo their number; the root is never replaced) and returns the
// path of the place: any value at any path, for fuzz targets whose input
// chooses both.
func (c *Case) Graft(selector uint, v *yaml.Node) string {
	all := sites(c.Doc)[1:]
	if len(all) == 0 {
		return ""
	}
	s := all[selector%uint(len(all))]
	c.replace(s, v)
	c.Mutations = append(c.Mutations, Mutation{Op: "graft", Path: s.path, Detail: "replaced by " + describe(v)})
	return s.path
}

// site is a place in the tree: a value, with the mapping or sequence that
// holds it.
type site struct {
	path   string
	parent *yaml.Node // nil for the root
	key    *yaml.Node // the key node, in a mapping
	index  int        // the value's index in parent.Content
	node   *yaml.Node
}

func sites(root *yaml.Node) []site {
	var out []site
	var walk func(n *yaml.Node, path string, parent, key *yaml.Node, index int)
	walk = func(n *yaml.Node, path string, parent, key *yaml.Node, index int) {
		out = append(out, site{path: path, parent: parent, key: key, index: index, node: n})
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i].Value
				p := k
				if path != "" {
					p = path + "." + k
				}
				walk(n.Content[i+1], p, n, n.Content[i], i+1)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i), n, nil, i)
			}
		}
	}
	walk(root, "", nil, nil, 0)
	return out
}

func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

func str(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v} }

// plain is a scalar written without quotes, so that each reader resolves
// it by its own rules (on is a boolean in YAML 1.1, a string in 1.2).
func plain(v string) *yaml.Node { return &yaml.Node{Kind: yaml.ScalarNode, Value: v} }

func mapping(kv ...*yaml.Node) *yaml.Node { return &yaml.Node{Kind: yaml.MappingNode, Content: kv} }

func seq(items ...*yaml.Node) *yaml.Node { return &yaml.Node{Kind: yaml.SequenceNode, Content: items} }

func isString(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!str" }

func isInt(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.Tag == "!!int" }

// replace puts v where s.node was.
func (c *Case) replace(s site, v *yaml.Node) {
	if s.parent == nil {
		c.Doc = v
	} else {
		s.parent.Content[s.index] = v
	}
	c.mutated = append(c.mutated, v)
}

func (c *Case) markKey(s site) { c.mutated = append(c.mutated, s.key) }

// remove deletes the entry or item at s.
func remove(s site) {
	if s.parent.Kind == yaml.MappingNode {
		s.parent.Content = append(s.parent.Content[:s.index-1], s.parent.Content[s.index+1:]...)
	} else {
		s.parent.Content = append(s.parent.Content[:s.index], s.parent.Content[s.index+1:]...)
	}
}

// choose returns a site that ok accepts, if there is one.
func choose(r *rand.Rand, c *Case, ok func(site) bool) (site, bool) {
	var fit []site
	for _, s := range sites(c.Doc) {
		if ok(s) && !c.touched(s.node) {
			fit = append(fit, s)
		}
	}
	if len(fit) == 0 {
		return site{}, false
	}
	return pick(r, fit), true
}

// touched says whether n is, or is inside, a subtree already mutated, so
// that a second mutation changes something else.
func (c *Case) touched(n *yaml.Node) bool {
	for _, m := range c.mutated {
		if contains(m, n) || contains(n, m) {
			return true
		}
	}
	return false
}

func contains(tree, n *yaml.Node) bool {
	if tree == n {
		return true
	}
	for _, c := range tree.Content {
		if contains(c, n) {
			return true
		}
	}
	return false
}

var (
	boundaryLengths = []int{0, 1, 62, 63, 64, 252, 253, 254, 317}
	badChars        = []string{" ", "$", "_", "A", "/", ".", "-", ":", "é", "\t", "*", "~", "@", "#", "%"}
	yaml11Words     = []string{"on", "off", "yes", "no", "y", "n", "On", "OFF", "Yes", "NO", "Y", "N", "True", "FALSE"}
	floatSpellings  = []string{"3.0", "1.0", "0.0", "1e1", "1E1", "1e+1", "2.5", "-1.0", "1e400", "3.", ".5", "1_000", "0x3", "0o3", "03", "+3", ".inf", ".nan", "9223372036854775808", "-9223372036854775809"}
	unknownNames    = []string{"extra", "Spec", "specs", "backoffdelay", "Name", "x-unknown", "ref", "uri", "status", "kind", "deliveryy", "filtre"}
	cesqlExprs      = []string{
		"type = 'a'", "type = 'a' $", "_x = 'a'", "type = 'a' &&", "type = 'a';", "type = 'a' AND",
		"type LIKE", "EXISTS", "'a' = 'b'", "type IN ()", "myext IS NULL", "source LIKE 'a%' OR", "",
		"TRUE", "1 + 1 = 2", "INT(type) > 3", "UNKNOWNFN(type)", "type = \"a\"", "type = 'a' # x",
		"(type = 'a'", "type = 'a')", "NOT NOT type = 'a'", "id = 'x' AND source = 'y' OR subject = 'z'",
	}
	statusBodies = []string{
		"{}", "{observedGeneration: 1}", "{observedGeneration: x}", "{observedGeneration: 1.0}", "{observedGeneration: -1}",
		"{conditions: [{type: Ready, status: 'True'}]}", "{conditions: [{type: Ready}]}", "{conditions: x}",
		"{conditions: [{type: Ready, status: 'True', lastTransitionTime: x}]}", "{unknown: 1}", "{address: {url: http://x}}",
		"{address: {url: 7}}", "{annotations: {a: b}}", "{annotations: {a: 1}}", "[]", "x", "{observedGeneration: 1e1}",
		"{subscriberUri: http://x}", "{deadLetterSinkUri: 1}", "{physicalSubscription: {subscriberUri: http://x}}",
		"{conditions: [{type: Ready, status: on}]}", "{policies: []}", "{sinkUri: x}",
	}
	metaEntries = []string{"labels", "annotations"}
)

// apply applies op somewhere in c, reporting false when c has no place
// for it.
func apply(r *rand.Rand, c *Case, op string) (Mutation, bool) {
	m := Mutation{Op: op}
	switch op {
	case "absent":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil })
		if !ok {
			return m, false
		}
		remove(s)
		m.Path, m.Detail = s.path, "removed"
		c.mutated = append(c.mutated, s.parent)
	case "empty", "null":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil })
		if !ok {
			return m, false
		}
		var v *yaml.Node
		switch {
		case op == "null":
			v = plain("null")
		case s.node.Kind == yaml.MappingNode:
			v = &yaml.Node{Kind: yaml.MappingNode, Style: yaml.FlowStyle}
		case s.node.Kind == yaml.SequenceNode:
			v = &yaml.Node{Kind: yaml.SequenceNode, Style: yaml.FlowStyle}
		default:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle}
		}
		c.replace(s, v)
		m.Path, m.Detail = s.path, "set to "+op
	case "wrong-type":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil })
		if !ok {
			return m, false
		}
		var v *yaml.Node
		switch s.node.Kind {
		case yaml.MappingNode:
			v = pick(r, []*yaml.Node{seq(str("x")), str("x"), plain("7"), plain("true"), seq()})
		case yaml.SequenceNode:
			v = pick(r, []*yaml.Node{mapping(str("a"), str("b")), str("x"), plain("7"), mapping()})
		default:
			v = pick(r, []*yaml.Node{mapping(str("a"), str("b")), seq(str("x")), plain("42"), plain("true"), plain("1.5"), mapping(), seq()})
			if isInt(s.node) || s.node.Tag == "!!bool" {
				v = pick(r, []*yaml.Node{str("x"), str(s.node.Value), mapping(str("a"), str("b")), seq(plain("1"))})
			}
		}
		v.Style |= yaml.FlowStyle
		c.replace(s, v)
		m.Path, m.Detail = s.path, "replaced by "+describe(v)
	case "wrong-case":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil && (isString(s.node) && s.node.Value != "" || s.key != nil) })
		if !ok {
			return m, false
		}
		recase := pick(r, []func(string) string{strings.ToUpper, strings.ToLower, title})
		if s.key != nil && (!isString(s.node) || r.IntN(2) == 0) {
			old := s.key.Value
			s.key.Value = recase(old)
			if s.key.Value == old {
				s.key.Value = strings.ToUpper(old)
			}
			c.markKey(s)
			m.Path, m.Detail = s.path, fmt.Sprintf("key %q spelt %q", old, s.key.Value)
			break
		}
		v := recase(s.node.Value)
		if v == s.node.Value {
			v = strings.ToUpper(v)
		}
		c.replace(s, str(v))
		m.Path, m.Detail = s.path, fmt.Sprintf("%q spelt %q", s.node.Value, v)
	case "length":
		s, ok := choose(r, c, func(s site) bool {
			return s.parent != nil && (isString(s.node) || s.key != nil && isOpenMap(parentPath(s.path)))
		})
		if !ok {
			return m, false
		}
		n := pick(r, boundaryLengths)
		v := longName(n)
		if s.key != nil && isOpenMap(parentPath(s.path)) && r.IntN(2) == 0 {
			old := s.key.Value
			s.key.Value = longKey(r, n)
			c.markKey(s)
			m.Path, m.Detail = s.path, fmt.Sprintf("key %q replaced by one of %d characters", old, len(s.key.Value))
			break
		}
		c.replace(s, str(v))
		m.Path, m.Detail = s.path, fmt.Sprintf("a string of %d characters", n)
	case "chars":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil && (isString(s.node) || s.key != nil) })
		if !ok {
			return m, false
		}
		ch := pick(r, badChars)
		if s.key != nil && (!isString(s.node) || r.IntN(3) == 0) {
			old := s.key.Value
			s.key.Value = insertAt(r, old, ch)
			c.markKey(s)
			m.Path, m.Detail = s.path, fmt.Sprintf("key %q spelt %q", old, s.key.Value)
			break
		}
		v := insertAt(r, s.node.Value, ch)
		c.replace(s, str(v))
		m.Path, m.Detail = s.path, fmt.Sprintf("%q spelt %q", s.node.Value, v)
	case "yaml11":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil && s.node.Kind == yaml.ScalarNode })
		if !ok {
			return m, false
		}
		w := pick(r, yaml11Words)
		c.replace(s, plain(w))
		m.Path, m.Detail = s.path, "unquoted "+w
	case "number":
		s, ok := choose(r, c, func(s site) bool {
			return s.parent != nil && (isInt(s.node) || s.node.Kind == yaml.ScalarNode && r.IntN(8) == 0)
		})
		if !ok {
			return m, false
		}
		w := pick(r, floatSpellings)
		if isInt(s.node) && r.IntN(2) == 0 {
			// The same number, written as a float.
			w = pick(r, []string{s.node.Value + ".0", s.node.Value + "e0", s.node.Value + ".00"})
		}
		c.replace(s, plain(w))
		m.Path, m.Detail = s.path, "unquoted "+w
	case "unknown-field":
		s, ok := choose(r, c, func(s site) bool { return s.node.Kind == yaml.MappingNode })
		if !ok {
			return m, false
		}
		name := pick(r, unknownNames)
		s.node.Content = append(s.node.Content, str(name), pick(r, []*yaml.Node{str("x"), plain("1"), mapping(str("a"), str("b"))}))
		c.mutated = append(c.mutated, s.node.Content[len(s.node.Content)-2:]...)
		m.Path, m.Detail = join(s.path, name), "added"
	case "nonsense":
		s, ok := choose(r, c, func(s site) bool { return s.parent != nil })
		if !ok {
			return m, false
		}
		v := nonsense(r, 3+r.IntN(3))
		c.replace(s, v)
		m.Path, m.Detail = s.path, "replaced by "+describe(v)
	case "status":
		s := site{parent: c.Doc}
		body := pick(r, statusBodies)
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(body), &v); err != nil {
			panic(err)
		}
		for i := 0; i+1 < len(c.Doc.Content); i += 2 {
			if c.Doc.Content[i].Value == "status" {
				return m, false
			}
		}
		s.index = len(c.Doc.Content) + 1
		c.Doc.Content = append(c.Doc.Content, str("status"), nil)
		v.Content[0].Style |= yaml.FlowStyle
		c.replace(s, v.Content[0])
		m.Path, m.Detail = "status", "set to "+body
	case "meta":
		// A label or annotation whose key or value is at a boundary or
		// holds a character Kubernetes refuses.
		meta := mappingValue(c.Doc, "metadata")
		if meta == nil || c.touched(meta) {
			return m, false
		}
		which := pick(r, metaEntries)
		entries := mappingValue(meta, which)
		if entries == nil {
			entries = mapping()
			meta.Content = append(meta.Content, str(which), entries)
		}
		key, value := "example.com/k", "v"
		switch r.IntN(5) {
		case 4:
			// knc's own annotation, which Knative passes over and knc
			// admits only as "true" or "false".
			key, value = "knc.dev/keep-dead-lettered", pick(r, keepDeadLetteredValues)
		case 0:
			key = longKey(r, pick(r, boundaryLengths))
		case 1:
			key = insertAt(r, "example.com/key", pick(r, badChars))
		case 2:
			value = longName(pick(r, boundaryLengths))
		default:
			value = insertAt(r, "value", pick(r, badChars))
		}
		k, v := str(key), str(value)
		entries.Content = append(entries.Content, k, v)
		c.mutated = append(c.mutated, k, v)
		m.Path, m.Detail = "metadata."+which+"."+key, fmt.Sprintf("key of %d characters, value %q", len(key), value)
	case "cesql":
		s, ok := choose(r, c, func(s site) bool { return strings.HasSuffix(s.path, ".cesql") })
		if !ok {
			return m, false
		}
		e := pick(r, cesqlExprs)
		c.replace(s, str(e))
		m.Path, m.Detail = s.path, fmt.Sprintf("set to %q", e)
	case "source":
		return applySourceValue(r, c)
	default:
		panic("admissionfuzz: unknown operator " + op)
	}
	return m, true
}

// isOpenMap says whether the field at path is a map of free keys.
func isOpenMap(path string) bool {
	for _, suffix := range []string{"labels", "annotations", "attributes", "exact", "prefix", "suffix", "extensions", "matchLabels"} {
		if strings.HasSuffix(path, "."+suffix) {
			return true
		}
	}
	return false
}

func parentPath(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i]
	}
	return ""
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func mappingValue(m *yaml.Node, key string) *yaml.Node {
	if m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// longName is a valid DNS name of n characters.
func longName(n int) string {
	b := []byte(strings.Repeat("a", n))
	for i := 10; i < n-1; i += 11 {
		b[i] = '-'
	}
	return string(b)
}

// longKey is a qualified key of about n characters: a prefix, or a name
// part, at the boundary.
func longKey(r *rand.Rand, n int) string {
	if r.IntN(2) == 0 {
		return "example.com/" + longName(n)
	}
	prefix := longName(max(n-4, 1))
	if len(prefix) > 1 {
		prefix = prefix[:len(prefix)-1] + "o"
	}
	return prefix + ".com/k"
}

func insertAt(r *rand.Rand, s, ch string) string {
	i := 0
	if len(s) > 0 {
		switch r.IntN(3) {
		case 0:
			i = 0
		case 1:
			i = len(s)
		default:
			i = r.IntN(len(s) + 1)
		}
	}
	for i > 0 && i < len(s) && !isBoundary(s, i) {
		i--
	}
	return s[:i] + ch + s[i:]
}

func isBoundary(s string, i int) bool { return s[i]&0xC0 != 0x80 }

func title(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// nonsense is a nest of maps and lists, depth levels deep.
func nonsense(r *rand.Rand, depth int) *yaml.Node {
	if depth == 0 {
		return pick(r, []*yaml.Node{str("x"), plain("1"), plain("true"), plain("null"), plain("on"), str("")})
	}
	if r.IntN(2) == 0 {
		return seq(nonsense(r, depth-1), nonsense(r, depth-1))
	}
	return mapping(str(pick(r, unknownNames)), nonsense(r, depth-1))
}

func describe(n *yaml.Node) string {
	out, err := yaml.Marshal(n)
	if err != nil {
		return "?"
	}
	s := strings.TrimSpace(string(out))
	if len(s) > 60 {
		s = s[:60] + "…"
	}
	return strconv.Quote(s)
}

// clone copies a tree; old to new records which node became which.
func clone(n *yaml.Node, oldToNew map[*yaml.Node]*yaml.Node) *yaml.Node {
	if n == nil {
		return nil
	}
	c := *n
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		c.Content[i] = clone(k, oldToNew)
	}
	if oldToNew != nil {
		oldToNew[n] = &c
	}
	return &c
}
