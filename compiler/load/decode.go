package load

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
)

// Decode fills out, a pointer to a struct with json tags, from the document.
// Unlike a plain decoder it does not stop at the first problem: every
// unknown field, missing required field and type mismatch is reported, each
// with its position and field path.
//
// A field is required when its json tag lacks omitempty, unless its knc tag
// says "optional". A knc:"open" field takes any value; knc:"nullable" accepts
// null; knc:"time" takes an RFC 3339 time.
func Decode(doc *Document, out any) diag.List {
	return decode(doc, out, false)
}

// DecodeManifest decodes an object that a client sends to a cluster, as
// Decode does, and also refuses in a string field an unquoted scalar that
// YAML 1.1 reads as a boolean: kubectl and Argo CD (YAML 1.1) would send a
// boolean where Flux (YAML 1.2) sends the string. Files only knc reads,
// such as knc.yaml, are decoded with Decode.
func DecodeManifest(doc *Document, out any) diag.List {
	return decode(doc, out, true)
}

func decode(doc *Document, out any, yaml11 bool) diag.List {
	t := doc.tree
	if t == nil {
		// Not compacted: decode a compact copy, which costs less than
		// the decoding itself.
		if t = compact(doc.root, doc.nodeFiles); t == nil {
			return diag.List{{Pos: doc.PosOf(""), Message: "the object is too large to decode"}}
		}
	}
	d := decoder{file: doc.File, yaml11: yaml11}
	d.value(node{t, 0}, reflect.ValueOf(out).Elem(), "", fieldOpts{})
	return d.diags
}

type decoder struct {
	file  string
	diags diag.List
	// yaml11: refuse YAML 1.1 booleans in string fields.
	yaml11 bool
}

type fieldOpts struct {
	open, nullable bool
	// time: the string is an RFC 3339 time, as Kubernetes' metav1.Time
	// decodes it.
	time bool
}

type fieldInfo struct {
	name     string
	index    []int
	required bool
	opts     fieldOpts
}

type structInfo struct {
	fields map[string]*fieldInfo
	names  []string // sorted, for messages
}

var structCache sync.Map // reflect.Type -> *structInfo

func infoFor(t reflect.Type) *structInfo {
	if v, ok := structCache.Load(t); ok {
		return v.(*structInfo)
	}
	info := &structInfo{fields: map[string]*fieldInfo{}}
	var collect func(t reflect.Type, index []int)
	collect = func(t reflect.Type, index []int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, rest, _ := strings.Cut(tag, ",")
			idx := append(slices.Clone(index), i)
			if f.Anonymous && (rest == "inline" || name == "") {
				collect(f.Type, idx)
				continue
			}
			if name == "-" || !f.IsExported() {
				continue
			}
			knc := f.Tag.Get("knc")
			fi := &fieldInfo{
				name:     name,
				index:    idx,
				required: !strings.Contains(rest, "omitempty") && !strings.Contains(knc, "optional"),
				opts:     fieldOpts{open: strings.Contains(knc, "open"), nullable: strings.Contains(knc, "nullable"), time: strings.Contains(knc, "time")},
			}
			info.fields[name] = fi
			info.names = append(info.names, name)
		}
	}
	collect(t, nil)
	slices.Sort(info.names)
	v, _ := structCache.LoadOrStore(t, info)
	return v.(*structInfo)
}

func (d *decoder) errorf(n node, path, format string, args ...any) {
	d.diags.Add(n.pos(d.file), path, format, args...)
}

func (d *decoder) value(n node, v reflect.Value, path string, opts fieldOpts) {
	n = n.resolve()
	if opts.open {
		var x any
		if err := n.copy().Decode(&x); err != nil {
			d.errorf(n, path, "%v", err)
			return
		}
		if x == nil {
			return
		}
		xv := reflect.ValueOf(x)
		if !xv.Type().AssignableTo(v.Type()) {
			// An open field typed as a map takes any object, but only
			// an object: the CRD's schema types it so.
			d.errorf(n, path, "must be an object, not a %s", kindName(n.kind()))
			return
		}
		v.Set(xv)
		return
	}
	if n.kind() == yaml.ScalarNode && n.tag() == "!!null" {
		// The API server prunes a null from a custom resource before
		// admission, so null is as good as absent; a required field left
		// null is then reported by validation as missing.
		return
	}
	switch v.Kind() {
	case reflect.Pointer:
		elem := reflect.New(v.Type().Elem())
		d.value(n, elem.Elem(), path, fieldOpts{time: opts.time})
		v.Set(elem)
	case reflect.Struct:
		d.structValue(n, v, path)
	case reflect.Map:
		if n.kind() != yaml.MappingNode {
			d.errorf(n, path, "must be a map of strings, not a %s", kindName(n.kind()))
			return
		}
		m := reflect.MakeMapWithSize(v.Type(), n.len()/2)
		for i := 0; i+1 < n.len(); i += 2 {
			k, val := n.child(i), n.child(i+1)
			key := k.value()
			elem := reflect.New(v.Type().Elem()).Elem()
			d.value(val, elem, JoinKey(path, key), fieldOpts{})
			if m.MapIndex(reflect.ValueOf(key)).IsValid() {
				d.errorf(k, JoinKey(path, key), "duplicate key %q", key)
			}
			m.SetMapIndex(reflect.ValueOf(key), elem)
		}
		v.Set(m)
	case reflect.Slice:
		if n.kind() != yaml.SequenceNode {
			d.errorf(n, path, "must be a list, not a %s", kindName(n.kind()))
			return
		}
		s := reflect.MakeSlice(v.Type(), n.len(), n.len())
		for i := range n.len() {
			d.value(n.child(i), s.Index(i), JoinIndex(path, i), fieldOpts{})
		}
		v.Set(s)
	case reflect.String:
		if n.kind() != yaml.ScalarNode || n.tag() != "!!str" {
			d.errorf(n, path, "must be a string, not %s%s", article(n), hintQuote(n))
			return
		}
		if b, ok := yaml11Bool(n); ok && d.yaml11 {
			// knc reads YAML 1.2, as Flux does; kubectl and Argo CD
			// read YAML 1.1, where this is a boolean Knative refuses
			// in a string field. The verdict would hang on the client.
			d.errorf(n, path, "kubectl and Argo CD read %s as the boolean %t (YAML 1.1); quote it: %q", n.value(), b, n.value())
			return
		}
		if opts.time && n.value() != "" {
			if _, err := time.Parse(time.RFC3339, n.value()); err != nil {
				d.errorf(n, path, "%q is not a time such as 2006-01-02T15:04:05Z (RFC 3339)", n.value())
				return
			}
		}
		v.SetString(n.value())
	case reflect.Int64, reflect.Int32, reflect.Int:
		if i, ok := wholeFloat(n); ok && !v.OverflowInt(i) {
			// kubectl sends a whole number written as a float (3.0,
			// 1e1) as an integer, and Knative admits it.
			v.SetInt(i)
			return
		}
		if n.kind() != yaml.ScalarNode || n.tag() != "!!int" {
			d.errorf(n, path, "must be an integer, not %s", article(n))
			return
		}
		i, err := strconv.ParseInt(n.value(), 0, 64)
		if err != nil || v.OverflowInt(i) {
			d.errorf(n, path, "integer %s is out of range", n.value())
			return
		}
		v.SetInt(i)
	case reflect.Float64:
		if n.kind() != yaml.ScalarNode || (n.tag() != "!!float" && n.tag() != "!!int") {
			d.errorf(n, path, "must be a number, not %s", article(n))
			return
		}
		f, err := strconv.ParseFloat(n.value(), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			d.errorf(n, path, "%s is not a finite number", n.value())
			return
		}
		v.SetFloat(f)
	case reflect.Bool:
		if n.kind() != yaml.ScalarNode || n.tag() != "!!bool" {
			d.errorf(n, path, "must be true or false, not %s", article(n))
			return
		}
		v.SetBool(n.value() == "true")
	default:
		d.errorf(n, path, "cannot decode into %s", v.Type())
	}
}

// yaml11Bool says whether n is an unquoted scalar that YAML 1.1 reads as
// a boolean and YAML 1.2 as a string (on, off, yes, no, y, n and their
// capitalised spellings), and which boolean.
func yaml11Bool(n node) (value, ok bool) {
	if yaml.Style(n.c().style)&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) != 0 {
		return false, false
	}
	switch n.value() {
	case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
		return true, true
	case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
		return false, true
	}
	return false, false
}

// wholeFloat returns the integer a float scalar such as 3.0 or 1e1 stands
// for, when it is a whole number in range.
func wholeFloat(n node) (int64, bool) {
	if n.kind() != yaml.ScalarNode || n.tag() != "!!float" {
		return 0, false
	}
	f, err := strconv.ParseFloat(n.value(), 64)
	if err != nil || f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
		return 0, false
	}
	return int64(f), true
}

func (d *decoder) structValue(n node, v reflect.Value, path string) {
	if n.kind() != yaml.MappingNode {
		d.errorf(n, path, "must be an object, not %s", article(n))
		return
	}
	info := infoFor(v.Type())
	seen := make(map[string]bool, n.len()/2)
	for i := 0; i+1 < n.len(); i += 2 {
		k, val := n.child(i), n.child(i+1)
		key := k.value()
		fpath := JoinKey(path, key)
		f, ok := info.fields[key]
		if !ok {
			d.errorf(k, fpath, "unknown field %q%s", key, suggest(key, info.names))
			continue
		}
		if seen[key] {
			d.errorf(k, fpath, "duplicate field %q", key)
			continue
		}
		seen[key] = true
		d.value(val, v.FieldByIndex(f.index), fpath, f.opts)
	}
	for _, name := range info.names {
		if f := info.fields[name]; f.required && !seen[name] {
			d.errorf(n, JoinKey(path, name), "field is required")
		}
	}
}

// suggest names the closest known field, or lists them all.
func suggest(name string, known []string) string {
	best, bestDist := "", 3
	for _, k := range known {
		if dist := editDistance(strings.ToLower(name), strings.ToLower(k)); dist < bestDist {
			best, bestDist = k, dist
		}
	}
	if best != "" {
		return fmt.Sprintf("; did you mean %q?", best)
	}
	var prefixed []string
	for _, k := range known {
		if len(name) >= 3 && strings.HasPrefix(strings.ToLower(k), strings.ToLower(name)) {
			prefixed = append(prefixed, k)
		}
	}
	switch len(prefixed) {
	case 0:
		return "; allowed fields are " + strings.Join(known, ", ")
	case 1:
		return fmt.Sprintf("; did you mean %q?", prefixed[0])
	default:
		return "; did you mean one of " + strings.Join(prefixed, ", ") + "?"
	}
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func article(n node) string {
	if n.kind() != yaml.ScalarNode {
		if n.kind() == yaml.MappingNode {
			return "an object"
		}
		return "a " + kindName(n.kind())
	}
	switch n.tag() {
	case "!!int":
		return "the integer " + n.value()
	case "!!float":
		return "the number " + n.value()
	case "!!bool":
		return "the boolean " + n.value()
	case "!!null":
		return "null"
	case "!!str":
		return strconv.Quote(n.value())
	}
	return n.value()
}

func hintQuote(n node) string {
	if n.kind() == yaml.ScalarNode && n.tag() != "!!str" && n.tag() != "!!null" {
		return fmt.Sprintf(` (quote it: "%s")`, n.value())
	}
	return ""
}

// SuggestField names, for a field name no schema knows, the closest known
// field, or lists them all, as the decoder does for an unknown field.
func SuggestField(name string, known []string) string { return suggest(name, known) }
