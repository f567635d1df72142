package render

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The output is written by this small encoder rather than a YAML library:
// it is faster for the sizes knc builds (tens of thousands of objects), it
// needs no reflection, and it fixes the few choices that make files easy to
// review: apiVersion, kind and metadata first, other keys sorted, strings
// quoted only when YAML would read them as something else, and multi-line
// strings (the routing table) as literal blocks.

// keyPriority orders the well-known keys of an object before the others.
var keyPriority = map[string]int{
	"apiVersion": 1, "kind": 2, "metadata": 3,
	"name": 4, "namespace": 5, "labels": 6, "annotations": 7,
}

func keyLess(a, b string) bool {
	pa, pb := keyPriority[a], keyPriority[b]
	switch {
	case pa != 0 && pb != 0:
		return pa < pb
	case pa != 0:
		return true
	case pb != 0:
		return false
	}
	return a < b
}

// sortedKeys returns the keys of m in output order, in buf's storage.
func sortedKeys(m map[string]any, buf []string) []string {
	keys := buf[:0]
	for k := range m {
		keys = append(keys, k)
	}
	// Most mappings have a handful of keys, where an insertion sort beats a
	// general one; a ConfigMap's data may have tens of thousands, where it
	// would take quadratic time.
	if len(keys) > insertionSortKeys {
		slices.SortFunc(keys, compareKeys)
		return keys
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keyLess(keys[j], keys[j-1]); j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

// insertionSortKeys is the most keys sortedKeys sorts by insertion.
const insertionSortKeys = 16

// compareKeys is keyLess as a comparison; the keys of a mapping differ.
func compareKeys(a, b string) int {
	switch {
	case keyLess(a, b):
		return -1
	case keyLess(b, a):
		return 1
	}
	return 0
}

// encodeYAML appends v, a generic JSON value (maps, slices, strings,
// json.Number, numbers, bools, nil), as one YAML document.
func encodeYAML(buf *bytes.Buffer, v any) error {
	e := yamlEncoder{buf: buf}
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			buf.WriteString("{}\n")
			return e.err
		}
		e.mapping(v, 0)
	case []any:
		if len(v) == 0 {
			buf.WriteString("[]\n")
			return e.err
		}
		e.sequence(v, 0)
	default:
		e.scalar(v, 0)
		buf.WriteByte('\n')
	}
	return e.err
}

type yamlEncoder struct {
	buf *bytes.Buffer
	err error
	// keys holds a reusable key slice per nesting depth, sparing an
	// allocation for every map written.
	keys [][]string
	// entryBufs does the same for the model values written by typed.go.
	entryBufs [][]entry
}

func (e *yamlEncoder) sortedKeys(m map[string]any, depth int) []string {
	for len(e.keys) <= depth {
		e.keys = append(e.keys, nil)
	}
	e.keys[depth] = sortedKeys(m, e.keys[depth])
	return e.keys[depth]
}

func (e *yamlEncoder) indent(n int) {
	for range n {
		e.buf.WriteString("  ")
	}
}

// mapping writes the entries of m, each on its own line at depth.
func (e *yamlEncoder) mapping(m map[string]any, depth int) {
	for i, k := range e.sortedKeys(m, depth) {
		if i > 0 || depth > 0 {
			e.indent(depth)
		}
		e.writeKey(k)
		e.buf.WriteByte(':')
		e.value(m[k], depth)
	}
}

// sequence writes the items of s at depth. Sequences inside a mapping are
// not indented further, as kubectl writes them.
func (e *yamlEncoder) sequence(s []any, depth int) {
	for i, item := range s {
		if i > 0 || depth > 0 {
			e.indent(depth)
		}
		e.buf.WriteString("-")
		switch item := item.(type) {
		case map[string]any:
			if len(item) == 0 {
				e.buf.WriteString(" {}\n")
				continue
			}
			e.buf.WriteByte(' ')
			// The first entry follows the dash; the rest line up with it.
			keys := e.sortedKeys(item, depth+1)
			for j, k := range keys {
				if j > 0 {
					e.indent(depth + 1)
				}
				e.writeKey(k)
				e.buf.WriteByte(':')
				e.value(item[k], depth+1)
			}
		case []any:
			if len(item) == 0 {
				e.buf.WriteString(" []\n")
				continue
			}
			e.buf.WriteByte('\n')
			e.sequence(item, depth+1)
		default:
			e.buf.WriteByte(' ')
			e.scalar(item, depth+1)
			e.buf.WriteByte('\n')
		}
	}
}

// value writes what follows "key:" on the same line or the next ones.
func (e *yamlEncoder) value(v any, depth int) {
	switch v := v.(type) {
	case map[string]any:
		if len(v) == 0 {
			e.buf.WriteString(" {}\n")
			return
		}
		e.buf.WriteByte('\n')
		e.mapping(v, depth+1)
	case []any:
		if len(v) == 0 {
			e.buf.WriteString(" []\n")
			return
		}
		e.buf.WriteByte('\n')
		e.sequence(v, depth)
	default:
		e.buf.WriteByte(' ')
		e.scalar(v, depth+1)
		e.buf.WriteByte('\n')
	}
}

func (e *yamlEncoder) scalar(v any, depth int) {
	switch v := v.(type) {
	case nil:
		e.buf.WriteString("null")
	case bool:
		e.buf.WriteString(strconv.FormatBool(v))
	case string:
		e.writeString(v, depth)
	case json.Number:
		e.buf.WriteString(v.String())
	case int:
		e.buf.WriteString(strconv.Itoa(v))
	case int64:
		e.buf.WriteString(strconv.FormatInt(v, 10))
	case int32:
		e.buf.WriteString(strconv.FormatInt(int64(v), 10))
	case float64:
		if math.IsInf(v, 0) || math.IsNaN(v) {
			e.err = fmt.Errorf("cannot encode %v in YAML", v)
			return
		}
		e.buf.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	default:
		e.err = fmt.Errorf("cannot encode a value of type %T in YAML", v)
	}
}

func (e *yamlEncoder) writeKey(k string) {
	if plainSafe(k) {
		e.buf.WriteString(k)
		return
	}
	e.quoted(k)
}

// quoted writes s as a double-quoted scalar, escaping every character a
// YAML reader refuses raw or treats as a line break.
func (e *yamlEncoder) quoted(s string) {
	e.buf.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			e.buf.WriteString(`\"`)
		case r == '\\':
			e.buf.WriteString(`\\`)
		case r == '\n':
			e.buf.WriteString(`\n`)
		case r == '\t':
			e.buf.WriteString(`\t`)
		case r == '\r':
			e.buf.WriteString(`\r`)
		case yamlPrintable(r):
			e.buf.WriteRune(r)
		case r <= 0xFFFF:
			fmt.Fprintf(e.buf, `\u%04X`, r)
		default:
			fmt.Fprintf(e.buf, `\U%08X`, r)
		}
	}
	e.buf.WriteByte('"')
}

// yamlPrintable reports the characters YAML allows raw in a scalar that are
// not line breaks (NEL, LS and PS are line breaks in YAML 1.1).
func yamlPrintable(r rune) bool {
	switch {
	case r >= 0x20 && r <= 0x7E:
		return true
	case r >= 0xA0 && r <= 0xD7FF:
		return r != 0x2028 && r != 0x2029
	case r >= 0xE000 && r <= 0xFFFD:
		return r != 0xFEFF
	case r >= 0x10000 && r <= 0x10FFFF:
		return true
	}
	return false
}

// writeString writes s plain when YAML reads it back as the same string,
// as a literal block when it spans lines, and double-quoted otherwise.
func (e *yamlEncoder) writeString(s string, depth int) {
	switch {
	case plainSafe(s):
		e.buf.WriteString(s)
	case blockSafe(s):
		if strings.HasSuffix(s, "\n") {
			e.buf.WriteString("|\n")
			s = s[:len(s)-1]
		} else {
			e.buf.WriteString("|-\n")
		}
		for line := range strings.SplitSeq(s, "\n") {
			if line != "" {
				e.indent(depth)
				e.buf.WriteString(line)
			}
			e.buf.WriteByte('\n')
		}
		// The caller ends the line; a block already has.
		e.buf.Truncate(e.buf.Len() - 1)
	default:
		e.quoted(s)
	}
}

// plainSafe reports whether s can be written without quotes: it starts
// with a character that begins no YAML syntax, holds nothing YAML treats
// specially, and cannot be read as a number, boolean, null or date, in
// YAML 1.1 or 1.2.
func plainSafe(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '-' || c == '.' || c == '_' || c == '/':
			if i == 0 && c == '-' && (len(s) == 1 || s[1] == ' ' || strings.HasPrefix(s, "---")) {
				// "- " begins a sequence item, "---" a document.
				return false
			}
		case c == ':':
			// "a:b" is plain, "a: b" and "a:" are not; colons also make
			// sexagesimal numbers in YAML 1.1.
			if i == len(s)-1 || s[i+1] == ' ' || i == 0 {
				return false
			}
		case c == ' ':
			if i == 0 || i == len(s)-1 || s[i+1] == '#' || s[i+1] == ' ' {
				return false
			}
		default:
			return false
		}
	}
	return !looksNonString(s)
}

// looksNonString reports strings YAML resolves to another type.
func looksNonString(s string) bool {
	if len(s) <= 5 && isKeyword(s) {
		return true
	}
	if s == "." || strings.HasPrefix(s, "...") {
		return true
	}
	// A string that starts like a number and holds only what numbers and
	// timestamps are made of is quoted: YAML 1.1 reads ints, floats,
	// sexagesimals and timestamps (2001-12-14 21:59:43.10, with a space or
	// a lower-case t before the time) from such strings, and a superset is
	// simpler to get right than their grammar. Quoting a string that needed
	// none changes nothing for a reader.
	c := s[0]
	if (c >= '0' && c <= '9' || c == '+' || c == '-' || c == '.') && strings.ContainsAny(s, "0123456789") {
		for i := 0; i < len(s); i++ {
			if !strings.ContainsRune("0123456789abcdefABCDEFxXoO._:+-eE tTzZ", rune(s[i])) {
				return false
			}
		}
		return true
	}
	return false
}

// isKeyword reports the booleans, nulls and special floats of YAML 1.1
// and 1.2, in any case.
func isKeyword(s string) bool {
	switch strings.ToLower(s) {
	case "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~", ".inf", ".nan", "-.inf", "+.inf":
		return true
	}
	return false
}

// blockSafe reports whether s can be a literal block: several lines, no
// character a block cannot hold, no leading space on the first line (which
// would need an indentation indicator), and at most one final newline.
func blockSafe(s string) bool {
	if !strings.Contains(strings.TrimSuffix(s, "\n"), "\n") || strings.HasSuffix(s, "\n\n") {
		return false
	}
	if s[0] == ' ' || s[0] == '\t' || s[0] == '\n' {
		return false
	}
	for _, r := range s {
		if r != '\n' && r != '\t' && !yamlPrintable(r) {
			return false
		}
	}
	for line := range strings.SplitSeq(s, "\n") {
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			// Trailing blanks survive a block but vanish in most editors.
			return false
		}
	}
	return true
}
