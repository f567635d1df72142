package render

import (
	"bytes"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"sync"

	"github.com/knc-dev/knc/compiler/model"
)

// Triggers and Subscriptions are most of a large project's objects and no
// plugin reads them, so they are written straight from the model's values
// rather than converted to generic maps first: the same YAML, with far
// less garbage. TestTypedMatchesGeneric holds the two paths to the same
// output.

// cleanTrigger and cleanSubscription return what normalise would produce,
// as typed values: no status, no server-owned metadata, the spec hash
// annotated.
func cleanTrigger(t *model.Trigger, hash string) *model.Trigger {
	c := *t
	c.Status = nil
	c.Metadata = cleanMeta(t.Metadata, hash, model.Spec(t))
	return &c
}

func cleanSubscription(s *model.Subscription, hash string) *model.Subscription {
	c := *s
	c.Status = nil
	c.Metadata = cleanMeta(s.Metadata, hash, model.Spec(s))
	return &c
}

func cleanMeta(m model.ObjectMeta, hash string, spec any) model.ObjectMeta {
	m.UID, m.ResourceVersion, m.Generation, m.CreationTimestamp = "", "", 0, nil
	if hash == "" {
		hash = model.SpecHash(spec)
	}
	ann := make(map[string]string, len(m.Annotations)+1)
	maps.Copy(ann, m.Annotations)
	ann[model.SpecHashAnnotation] = hash
	m.Annotations = ann
	return m
}

// encodeTyped appends v, a pointer to a struct of the model, as one YAML
// document, exactly as encodeYAML(toGeneric(v)) would.
func encodeTyped(buf *bytes.Buffer, v any) error {
	e := yamlEncoder{buf: buf}
	entries := e.entries(reflect.ValueOf(v).Elem(), 0)
	if len(entries) == 0 {
		buf.WriteString("{}\n")
		return nil
	}
	e.typedMapping(entries, 0)
	return e.err
}

type entry struct {
	key string
	val reflect.Value
	// str holds the value of a map[string]string entry, which needs no
	// reflection.
	str   string
	isStr bool
}

type typedField struct {
	name      string
	index     []int
	omitEmpty bool
}

var typedFieldCache sync.Map // reflect.Type -> []typedField

// typedFields lists a struct's JSON fields, embedded ones flattened, in
// output order.
func typedFields(t reflect.Type) []typedField {
	if f, ok := typedFieldCache.Load(t); ok {
		return f.([]typedField)
	}
	var fields []typedField
	var collect func(t reflect.Type, index []int)
	collect = func(t reflect.Type, index []int) {
		for _, f := range fieldsOf(t) {
			idx := append(slices.Clone(index), f.index)
			if f.inline {
				collect(t.Field(f.index).Type, idx)
				continue
			}
			fields = append(fields, typedField{name: f.name, index: idx, omitEmpty: f.omitEmpty})
		}
	}
	collect(t, nil)
	slices.SortFunc(fields, func(a, b typedField) int {
		switch {
		case keyLess(a.name, b.name):
			return -1
		case keyLess(b.name, a.name):
			return 1
		}
		return 0
	})
	f, _ := typedFieldCache.LoadOrStore(t, fields)
	return f.([]typedField)
}

// entries returns the keys and values a struct or map writes at depth, in
// order, in a buffer reused for every mapping written at that depth.
func (e *yamlEncoder) entries(v reflect.Value, depth int) []entry {
	for len(e.entryBufs) <= depth {
		e.entryBufs = append(e.entryBufs, nil)
	}
	out := e.entryBufs[depth][:0]
	defer func() { e.entryBufs[depth] = out }()
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range typedFields(v.Type()) {
			fv := v.FieldByIndex(f.index)
			if f.omitEmpty && isEmpty(fv) {
				continue
			}
			out = append(out, entry{key: f.name, val: fv})
		}
		return out
	case reflect.Map:
		if m, ok := v.Interface().(map[string]string); ok {
			for k, x := range m {
				out = append(out, entry{key: k, str: x, isStr: true})
			}
		} else {
			it := v.MapRange()
			for it.Next() {
				out = append(out, entry{key: it.Key().String(), val: it.Value()})
			}
		}
		// Maps hold a few keys: an insertion sort beats a general one.
		for i := 1; i < len(out); i++ {
			for j := i; j > 0 && keyLess(out[j].key, out[j-1].key); j-- {
				out[j], out[j-1] = out[j-1], out[j]
			}
		}
		return out
	}
	e.err = fmt.Errorf("cannot write a %s as a mapping", v.Type())
	return out
}

func (e *yamlEncoder) typedMapping(entries []entry, depth int) {
	for i, en := range entries {
		if i > 0 || depth > 0 {
			e.indent(depth)
		}
		e.writeKey(en.key)
		e.buf.WriteByte(':')
		e.entryValue(en, depth)
	}
}

// deref follows pointers and interfaces; ok is false for nil.
func deref(v reflect.Value) (reflect.Value, bool) {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return v, false
		}
		v = v.Elem()
	}
	return v, true
}

func (e *yamlEncoder) entryValue(en entry, depth int) {
	if en.isStr {
		e.buf.WriteByte(' ')
		e.writeString(en.str, depth+1)
		e.buf.WriteByte('\n')
		return
	}
	e.typedValue(en.val, depth)
}

// typedValue mirrors value.
func (e *yamlEncoder) typedValue(v reflect.Value, depth int) {
	v, ok := deref(v)
	if !ok || (v.Kind() == reflect.Map || v.Kind() == reflect.Slice) && v.IsNil() {
		e.buf.WriteString(" null\n")
		return
	}
	switch v.Kind() {
	case reflect.Struct, reflect.Map:
		entries := e.entries(v, depth+1)
		if len(entries) == 0 {
			e.buf.WriteString(" {}\n")
			return
		}
		e.buf.WriteByte('\n')
		e.typedMapping(entries, depth+1)
	case reflect.Slice:
		if v.Len() == 0 {
			e.buf.WriteString(" []\n")
			return
		}
		e.buf.WriteByte('\n')
		e.typedSequence(v, depth)
	default:
		e.buf.WriteByte(' ')
		e.typedScalar(v, depth+1)
		e.buf.WriteByte('\n')
	}
}

// typedSequence mirrors sequence.
func (e *yamlEncoder) typedSequence(s reflect.Value, depth int) {
	for i := range s.Len() {
		if i > 0 || depth > 0 {
			e.indent(depth)
		}
		e.buf.WriteString("-")
		item, ok := deref(s.Index(i))
		if !ok || (item.Kind() == reflect.Map || item.Kind() == reflect.Slice) && item.IsNil() {
			e.buf.WriteString(" null\n")
			continue
		}
		switch item.Kind() {
		case reflect.Struct, reflect.Map:
			entries := e.entries(item, depth+1)
			if len(entries) == 0 {
				e.buf.WriteString(" {}\n")
				continue
			}
			e.buf.WriteByte(' ')
			for j, en := range entries {
				if j > 0 {
					e.indent(depth + 1)
				}
				e.writeKey(en.key)
				e.buf.WriteByte(':')
				e.entryValue(en, depth+1)
			}
		case reflect.Slice:
			if item.Len() == 0 {
				e.buf.WriteString(" []\n")
				continue
			}
			e.buf.WriteByte('\n')
			e.typedSequence(item, depth+1)
		default:
			e.buf.WriteByte(' ')
			e.typedScalar(item, depth+1)
			e.buf.WriteByte('\n')
		}
	}
}

func (e *yamlEncoder) typedScalar(v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.String:
		e.writeString(v.String(), depth)
	case reflect.Bool:
		e.buf.WriteString(strconv.FormatBool(v.Bool()))
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		e.buf.WriteString(strconv.FormatInt(v.Int(), 10))
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		e.buf.WriteString(strconv.FormatUint(v.Uint(), 10))
	case reflect.Float32, reflect.Float64:
		e.buf.WriteString(strconv.FormatFloat(v.Float(), 'g', -1, 64))
	default:
		e.err = fmt.Errorf("cannot encode a value of type %s in YAML", v.Type())
	}
}
