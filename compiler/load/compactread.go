package load

import (
	"bytes"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
)

// The compact reader builds a document's compact form straight from its
// bytes, for the YAML most manifests are written in: block and flow
// mappings and lists of plain and quoted scalars, with comments. yaml.v3
// holds about 180 bytes for every node while it parses, so that one
// document of a million scalars peaked at 130 bytes of RSS per input
// byte; the compact reader holds 36 bytes a node.
//
// It reads only what it understands fully and declines everything else
// (anchors, aliases, tags, block scalars, multi-line plain scalars, empty
// values, tabs, merge keys, duplicate keys, scalars the loader refuses,
// anything yaml.v3 might refuse), which yaml.v3 then reads as before, with
// its own messages. FuzzCompactReaderAgreesWithYAMLv3 holds it to
// yaml.v3: whatever it accepts, yaml.v3 accepts too, into the same
// values, tags, styles, lines and columns.

// maxCompactDepth is how deeply the compact reader nests collections
// before it leaves a document to yaml.v3, which bounds its recursion.
const maxCompactDepth = 200

// maxSimpleKey is the most bytes from a key's start to its colon that the
// compact reader reads: yaml.v3 refuses more than 1024 characters.
const maxSimpleKey = 1000

// readerDeclined is panicked with, and recovered, when the compact
// reader meets something it leaves to yaml.v3.
type readerDeclined struct{}

// compactReader reads one chunk. It runs twice: first counting the nodes
// and text, then filling a tree allocated at its final size, so that the
// large slices are never grown by copying.
type compactReader struct {
	src  []byte
	pos  int
	line int // 1-based, within the chunk
	col  int // 1-based, in characters
	// lineOffset is the number of lines before the chunk in its file.
	lineOffset int
	depth      int
	// tokenStart is where the last scalar read starts.
	tokenStart int

	fill bool
	// Counted in the first pass.
	nodes, textBytes int
	// Filled in the second.
	t        *tree
	text     strings.Builder
	tagIndex map[string]uint16
	// open holds the indexes of the children of the collections being
	// read, each collection's run after those of its parents; the first
	// pass measures it as openLen, at most maxOpen.
	open             []uint32
	openLen, maxOpen int
}

// readCompact returns the compact form of the chunk's document, or nil
// when the compact reader leaves it to yaml.v3.
func readCompact(src []byte, lineOffset int) (t *tree) {
	if !plainText(src) {
		return nil
	}
	r := &compactReader{src: src, lineOffset: lineOffset}
	if !r.run() {
		return nil
	}
	if r.nodes == 0 || r.nodes >= math.MaxUint32 || r.textBytes >= math.MaxUint32 {
		return nil
	}
	r.fill = true
	r.t = &tree{nodes: make([]cnode, 0, r.nodes), kids: make([]uint32, 0, r.nodes-1)}
	r.text.Grow(r.textBytes)
	r.open = make([]uint32, 0, r.maxOpen)
	r.tagIndex = map[string]uint16{}
	if !r.run() {
		return nil
	}
	r.t.text = r.text.String()
	if !loaderAccepts(r.t) {
		return nil
	}
	return r.t
}

// plainText reports whether src holds only characters the compact reader
// reads: printable ones, spaces and line feeds. Tabs, carriage returns,
// byte order marks and the line breaks YAML knows beyond the line feed are
// left to yaml.v3.
func plainText(src []byte) bool {
	for i := 0; i < len(src); {
		b := src[i]
		if b < utf8.RuneSelf {
			if b < 0x20 && b != '\n' || b == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(src[i:])
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if r < 0xa0 || r == 0x2028 || r == 0x2029 || r == 0xfeff || r >= 0xd800 && r < 0xe000 || r == 0xfffe || r == 0xffff {
			return false
		}
		i += size
	}
	return true
}

// run reads the chunk's one document, and reports whether the compact
// reader understood all of it.
func (r *compactReader) run() (ok bool) {
	r.pos, r.line, r.col, r.depth, r.openLen = 0, 1, 1, 0, 0
	defer func() {
		if v := recover(); v != nil {
			if _, declined := v.(readerDeclined); !declined {
				panic(v)
			}
			ok = false
		}
	}()
	if !r.nextContent() {
		return false // only comments: yaml.v3 says what that is
	}
	switch r.peek() {
	case '{', '[':
		r.flowNode(-1)
		r.endOfLine()
		if r.nextContent() {
			r.decline()
		}
	default:
		if r.col != 1 {
			r.decline()
		}
		r.blockNodeAtLineStart(-1)
		if r.pos < len(r.src) {
			r.decline()
		}
	}
	return true
}

func (r *compactReader) decline() { panic(readerDeclined{}) }

func (r *compactReader) peek() byte {
	if r.pos < len(r.src) {
		return r.src[r.pos]
	}
	return 0
}

func (r *compactReader) peekAt(i int) byte {
	if r.pos+i < len(r.src) {
		return r.src[r.pos+i]
	}
	return 0
}

// advance moves past n bytes of one line.
func (r *compactReader) advance(n int) {
	for _, b := range r.src[r.pos : r.pos+n] {
		if b&0xc0 != 0x80 {
			r.col++
		}
	}
	r.pos += n
}

func (r *compactReader) newline() {
	r.pos++
	r.line++
	r.col = 1
}

func (r *compactReader) skipSpaces() {
	for r.peek() == ' ' {
		r.pos++
		r.col++
	}
}

// atBreak says whether the next byte ends a token: a space, a line feed
// or the end.
func (r *compactReader) atBreak(i int) bool {
	b := r.peekAt(i)
	return b == ' ' || b == '\n' || b == 0
}

// endOfLine reads spaces and a comment up to the end of the line, and
// declines anything else.
func (r *compactReader) endOfLine() {
	r.skipSpaces()
	switch r.peek() {
	case 0, '\n':
		return
	case '#':
		if r.pos == 0 || r.src[r.pos-1] != ' ' {
			r.decline()
		}
		r.skipComment()
	default:
		r.decline()
	}
}

func (r *compactReader) skipComment() {
	end := bytes.IndexByte(r.src[r.pos:], '\n')
	if end < 0 {
		end = len(r.src) - r.pos
	}
	r.advance(end)
}

// nextContent moves to the first character of the next line that holds
// more than spaces and a comment, and reports whether there is one. It
// starts at the end of a line or at the start of the chunk.
func (r *compactReader) nextContent() bool {
	for {
		if r.peek() == '\n' {
			r.newline()
		}
		r.skipSpaces()
		switch r.peek() {
		case 0:
			return false
		case '\n':
			continue
		case '#':
			r.skipComment()
			continue
		}
		return true
	}
}

// indent is the column of the current character less one.
func (r *compactReader) indent() int { return r.col - 1 }

func (r *compactReader) atEnd() bool { return r.pos >= len(r.src) }

// atSequenceEntry says whether a block list entry starts here.
func (r *compactReader) atSequenceEntry() bool {
	return r.peek() == '-' && r.atBreak(1)
}

func (r *compactReader) enter() {
	r.depth++
	if r.depth > maxCompactDepth {
		r.decline()
	}
}

// blockNodeAtLineStart reads a block collection that starts at the
// current character, the first of its line, whose parent is indented by
// parent. It ends at the first character of the next line of content
// indented by less, or at the end.
func (r *compactReader) blockNodeAtLineStart(parent int) uint32 {
	if r.atSequenceEntry() {
		return r.blockSequence(parent)
	}
	if r.peek() == '[' || r.peek() == '{' {
		// A flow collection on its own line: left to yaml.v3.
		r.decline()
	}
	line, col := r.line, r.col
	key, style := r.scalarToken(false)
	if !r.atKeyColon() {
		r.decline() // a scalar on its own line may go on below
	}
	return r.blockMapping(line, col, key, style)
}

// atKeyColon reads the colon after a key, and reports whether there is one.
func (r *compactReader) atKeyColon() bool {
	r.skipSpaces()
	if r.peek() == ':' && r.atBreak(1) {
		r.advance(1)
		return true
	}
	return false
}

// blockMapping reads a block mapping whose first key, already read, is
// key, at line:col.
func (r *compactReader) blockMapping(line, col int, key []byte, keyStyle yaml.Style) uint32 {
	r.enter()
	defer func() { r.depth-- }()
	indent := col - 1
	i := r.startCollection(yaml.MappingNode, "!!map", 0, line, col)
	mark := r.mark()
	for {
		r.addKey(key, keyStyle, line, col)
		r.blockValue(indent)
		if r.atEnd() || r.indent() < indent {
			break
		}
		if r.indent() > indent || r.atSequenceEntry() {
			r.decline()
		}
		line, col = r.line, r.col
		if r.peek() == '[' || r.peek() == '{' {
			r.decline()
		}
		key, keyStyle = r.scalarToken(false)
		if !r.atKeyColon() {
			r.decline()
		}
	}
	r.endCollection(i, mark)
	return i
}

// blockValue reads the value after a block mapping's key, whose mapping is
// indented by indent, up to the next line of content.
func (r *compactReader) blockValue(indent int) {
	r.skipSpaces()
	switch r.peek() {
	case 0, '\n', '#':
		r.endOfLine()
		if !r.nextContent() {
			r.decline() // an empty value
		}
		switch {
		case r.indent() > indent:
			r.child(r.blockNodeAtLineStart(indent))
		case r.indent() == indent && r.atSequenceEntry():
			r.child(r.blockSequence(indent - 1))
		default:
			r.decline() // an empty value
		}
		return
	}
	r.inlineValue(indent)
}

// inlineValue reads a scalar or flow collection that ends its line, in a
// block collection indented by indent, and moves to the next line of
// content.
func (r *compactReader) inlineValue(indent int) {
	switch r.peek() {
	case '[', '{':
		r.child(r.flowNode(indent))
	default:
		line, col := r.line, r.col
		value, style := r.scalarToken(false)
		r.child(r.addScalar(value, style, line, col))
	}
	r.endOfLine()
	if r.nextContent() && r.indent() > indent {
		r.decline() // a plain scalar going on, or an error
	}
}

// blockSequence reads a block list whose first entry starts at the
// current character; its parent is indented by parent.
func (r *compactReader) blockSequence(parent int) uint32 {
	r.enter()
	defer func() { r.depth-- }()
	indent := r.indent()
	if indent <= parent {
		// Only a mapping's value may be a list at the mapping's indent;
		// blockValue passes the indent less one.
		r.decline()
	}
	i := r.startCollection(yaml.SequenceNode, "!!seq", 0, r.line, r.col)
	mark := r.mark()
	for {
		r.advance(1) // the dash
		r.skipSpaces()
		switch r.peek() {
		case 0, '\n', '#':
			r.endOfLine()
			if !r.nextContent() || r.indent() <= indent {
				r.decline() // an empty entry
			}
			r.child(r.blockNodeAtLineStart(indent))
		case '[', '{':
			r.inlineValue(indent)
		default:
			if r.atSequenceEntry() {
				r.decline() // a list in a list on one line
			}
			line, col := r.line, r.col
			value, style := r.scalarToken(false)
			if r.atKeyColon() {
				r.child(r.blockMapping(line, col, value, style))
			} else {
				r.child(r.addScalar(value, style, line, col))
				r.endOfLine()
				if r.nextContent() && r.indent() > indent {
					r.decline()
				}
			}
		}
		if r.atEnd() || r.indent() < indent {
			break
		}
		if r.indent() > indent {
			r.decline()
		}
		if !r.atSequenceEntry() {
			break // the parent mapping's next key
		}
	}
	r.endCollection(i, mark)
	return i
}

// flowNode reads a flow collection, which starts at the current character,
// inside a block collection indented by indent (-1 at the top).
func (r *compactReader) flowNode(indent int) uint32 {
	r.enter()
	defer func() { r.depth-- }()
	open := r.peek()
	kind, tag, closing := yaml.SequenceNode, "!!seq", byte(']')
	if open == '{' {
		kind, tag, closing = yaml.MappingNode, "!!map", '}'
	}
	i := r.startCollection(kind, tag, yaml.FlowStyle, r.line, r.col)
	mark := r.mark()
	r.advance(1)
	for first := true; ; first = false {
		r.flowSpace(indent)
		if r.peek() == closing {
			if !first {
				r.decline() // a trailing comma
			}
			break
		}
		if kind == yaml.MappingNode {
			line, col := r.line, r.col
			if b := r.peek(); b == '[' || b == '{' {
				r.decline()
			}
			key, style := r.scalarToken(true)
			// A key and its colon share a line, as yaml.v3 wants.
			r.skipSpaces()
			if r.peek() != ':' || (style == 0 && !r.atBreak(1)) {
				r.decline()
			}
			r.addKey(key, style, line, col)
			r.advance(1)
			r.flowSpace(indent)
		}
		r.child(r.flowEntry(indent))
		r.flowSpace(indent)
		switch r.peek() {
		case ',':
			r.advance(1)
			continue
		case closing:
		default:
			r.decline()
		}
		break
	}
	r.advance(1)
	r.endCollection(i, mark)
	return i
}

// flowEntry reads a value in a flow collection.
func (r *compactReader) flowEntry(indent int) uint32 {
	switch r.peek() {
	case '[', '{':
		return r.flowNode(indent)
	}
	line, col := r.line, r.col
	value, style := r.scalarToken(true)
	if style == 0 {
		// A plain scalar that the line ends may go on on the next.
		r.skipSpaces()
		if b := r.peek(); b == '\n' || b == '#' || b == 0 {
			r.flowSpace(indent)
			if b := r.peek(); b != ',' && b != ']' && b != '}' {
				r.decline()
			}
		}
	}
	if r.peek() == ':' {
		r.decline() // a pair in a flow list, or a key without a value
	}
	return r.addScalar(value, style, line, col)
}

// flowSpace reads spaces, line breaks and comments inside a flow
// collection. Every line it goes on to must be indented more than the
// block collection around it.
func (r *compactReader) flowSpace(indent int) {
	afterSpace := false
	for {
		switch r.peek() {
		case ' ':
			r.skipSpaces()
			afterSpace = true
		case '\n':
			r.newline()
			r.skipSpaces()
			if b := r.peek(); b != '\n' && b != '#' && b != 0 && r.indent() <= indent {
				r.decline()
			}
			afterSpace = true
		case '#':
			if !afterSpace {
				r.decline()
			}
			r.skipComment()
		case 0:
			r.decline() // an unclosed collection
			return
		default:
			return
		}
	}
}

// scalarToken reads a plain or quoted scalar on one line and returns its
// value. A quoted scalar's value is copied only when it holds an escaped
// quote.
func (r *compactReader) scalarToken(flow bool) ([]byte, yaml.Style) {
	r.tokenStart = r.pos
	switch r.peek() {
	case '"':
		end := bytes.IndexAny(r.src[r.pos+1:], "\"\\\n")
		if end < 0 || r.src[r.pos+1+end] != '"' {
			r.decline() // an escape, or more than one line
		}
		value := r.src[r.pos+1 : r.pos+1+end]
		r.advance(end + 2)
		return value, yaml.DoubleQuotedStyle
	case '\'':
		var value []byte
		start := r.pos + 1
		p := start
		for {
			end := bytes.IndexAny(r.src[p:], "'\n")
			if end < 0 || r.src[p+end] == '\n' {
				r.decline()
			}
			p += end
			if p+1 < len(r.src) && r.src[p+1] == '\'' {
				value = append(value, r.src[start:p+1]...)
				p += 2
				start = p
				continue
			}
			break
		}
		if value == nil {
			value = r.src[start:p]
		} else {
			value = append(value, r.src[start:p]...)
		}
		r.advance(p + 1 - r.pos)
		return value, yaml.SingleQuotedStyle
	}
	return r.plainToken(flow), 0
}

// plainToken reads a plain scalar up to the end of its line, a comment, a
// colon and space, or in a flow collection a flow indicator, a question
// mark (which ends it for yaml.v3) or any colon.
func (r *compactReader) plainToken(flow bool) []byte {
	switch b := r.peek(); b {
	case '-':
		if c := r.peekAt(1); !isAlnum(c) && c != '.' {
			r.decline()
		}
	case 0, '\n', ' ', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%', '@', '`':
		r.decline()
	}
	start := r.pos
	end := start
	for p := start; p < len(r.src); p++ {
		b := r.src[p]
		if b == '\n' {
			break
		}
		if b == '#' && r.src[p-1] == ' ' {
			break
		}
		if b == ':' {
			if flow {
				break
			}
			if p+1 == len(r.src) || r.src[p+1] == ' ' || r.src[p+1] == '\n' {
				break
			}
		}
		if flow && (b == ',' || b == '?' || b == '[' || b == ']' || b == '{' || b == '}') {
			break
		}
		if b != ' ' {
			end = p + 1
		}
	}
	r.advance(end - start)
	return r.src[start:end]
}

func isAlnum(b byte) bool {
	return b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
}

// startCollection adds a collection's node; its children follow.
func (r *compactReader) startCollection(kind yaml.Kind, tag string, style yaml.Style, line, col int) uint32 {
	return r.addNode(kind, tag, style, nil, line, col)
}

// endCollection gives collection i the children added since mark.
func (r *compactReader) endCollection(i uint32, mark int) {
	if !r.fill {
		r.openLen = mark
		return
	}
	kids := r.open[mark:]
	n := &r.t.nodes[i]
	n.first, n.count = uint32(len(r.t.kids)), uint32(len(kids))
	r.t.kids = append(r.t.kids, kids...)
	r.open = r.open[:mark]
}

// mark returns where the children of a collection about to be read
// start in open.
func (r *compactReader) mark() int {
	if r.fill {
		return len(r.open)
	}
	return r.openLen
}

// child records node k as the next child of the innermost collection.
func (r *compactReader) child(k uint32) {
	if r.fill {
		r.open = append(r.open, k)
		return
	}
	r.openLen++
	r.maxOpen = max(r.maxOpen, r.openLen)
}

// addKey adds a key that scalarToken read, up to its colon.
func (r *compactReader) addKey(key []byte, style yaml.Style, line, col int) {
	if r.pos-r.tokenStart > maxSimpleKey {
		r.decline()
	}
	r.child(r.addScalar(key, style, line, col))
}

func (r *compactReader) addScalar(value []byte, style yaml.Style, line, col int) uint32 {
	if !r.fill {
		r.nodes++
		r.textBytes += len(value)
		return 0
	}
	if style == 0 && string(value) == "<<" {
		r.decline() // a merge key
	}
	i := r.addNode(yaml.ScalarNode, "!!str", style, value, line, col)
	if style == 0 && (len(value) == 0 || mayResolve[value[0]]) {
		// The tag yaml.v3 resolves a plain scalar to. The value is
		// read from the text, which is never moved, rather than copied
		// for every scalar.
		n := &r.t.nodes[i]
		scratch := yaml.Node{Kind: yaml.ScalarNode, Value: r.text.String()[n.value:]}
		tag, ok := intern(r.tagIndex, &r.t.tags, scratch.ShortTag())
		if !ok {
			r.decline()
		}
		n.tag = tag
	}
	return i
}

// mayResolve holds the first characters of the plain scalars that
// yaml.v3 may resolve to another tag than !!str (its resolve table):
// signs, digits, dots and the first letters of null, true, false, yes,
// no, on, off and ~.
var mayResolve = func() (t [256]bool) {
	for _, c := range "+-.0123456789yYnNtTfFoO~" {
		t[c] = true
	}
	return t
}()

func (r *compactReader) addNode(kind yaml.Kind, tag string, style yaml.Style, value []byte, line, col int) uint32 {
	if !r.fill {
		r.nodes++
		r.textBytes += len(value)
		return 0
	}
	t := r.t
	if len(t.nodes) == cap(t.nodes) {
		r.decline() // the passes disagree; cannot happen
	}
	tagIndex, ok := intern(r.tagIndex, &t.tags, tag)
	if !ok {
		r.decline()
	}
	i := uint32(len(t.nodes))
	t.nodes = append(t.nodes, cnode{
		line: clamp32(line + r.lineOffset), column: clamp32(col),
		value: uint32(r.text.Len()), length: uint32(len(value)),
		tag: tagIndex, kind: uint8(kind), style: uint8(style),
	})
	r.text.Write(value)
	return i
}

// loaderAccepts checks what normalise checks of a document read by
// yaml.v3: no key is given twice in a mapping, and every scalar value is
// one the loader takes. When one is not, the compact form is dropped and
// yaml.v3's reading reports it.
func loaderAccepts(t *tree) bool {
	scratch := &yaml.Node{Kind: yaml.ScalarNode}
	var sorted []uint32
	for i := range t.nodes {
		n := node{t, uint32(i)}
		switch n.kind() {
		case yaml.MappingNode:
			if n.len() <= 2*linearKeys {
				for j := 0; j < n.len(); j += 2 {
					for k := 0; k < j; k += 2 {
						if n.child(k).value() == n.child(j).value() {
							return false
						}
					}
				}
			} else {
				sorted = sorted[:0]
				for j := 0; j < n.len(); j += 2 {
					sorted = append(sorted, n.t.kids[n.c().first+uint32(j)])
				}
				slices.SortFunc(sorted, func(a, b uint32) int {
					return strings.Compare(node{t, a}.value(), node{t, b}.value())
				})
				for j := 1; j < len(sorted); j++ {
					if (node{t, sorted[j]}).value() == (node{t, sorted[j-1]}).value() {
						return false
					}
				}
			}
			for j := 1; j < n.len(); j += 2 {
				if !scalarAccepted(n.child(j), scratch) {
					return false
				}
			}
		case yaml.SequenceNode:
			for j := range n.len() {
				if !scalarAccepted(n.child(j), scratch) {
					return false
				}
			}
		}
	}
	return true
}

func scalarAccepted(n node, scratch *yaml.Node) bool {
	if n.kind() != yaml.ScalarNode {
		return true
	}
	// What Scalar takes without a second look, checked without boxing
	// its result for every scalar of a large document.
	switch n.tag() {
	case "!!str", "!!null":
		return true
	case "!!bool":
		if v := n.value(); v == "true" || v == "false" {
			return true
		}
	case "!!int":
		if v := n.value(); isCanonicalInt(v) {
			if _, err := strconv.ParseInt(v, 10, 64); err == nil {
				return true
			}
		}
	}
	*scratch = yaml.Node{Kind: yaml.ScalarNode, Style: yaml.Style(n.c().style), Tag: n.tag(), Value: n.value()}
	_, err := Scalar(scratch)
	return err == nil
}
