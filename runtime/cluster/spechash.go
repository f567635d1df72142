package cluster

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/knc-dev/knc/internal/knative"
)

// The compiler hashes a spec as encoding/json writes its Go struct: fields
// in declaration order, empty optional fields left out, map keys sorted.
// SpecHash writes a live spec the same way, from the layouts below, which
// mirror the compiler's spec types field for field. A test outside the
// runtime (which may import the compiler) checks that both hashes agree on
// every object of the examples, after a round trip through the API server.

// shapeKind is how one JSON value is written.
type shapeKind int

const (
	shapeString shapeKind = iota
	shapeInt
	shapeObject
	shapeList
	shapeStringMap
	// shapeAny is a free-form value, written as encoding/json writes an
	// interface value.
	shapeAny
)

// shape is the layout of a JSON value.
type shape struct {
	kind   shapeKind
	fields []field // shapeObject
	elem   *shape  // shapeList
}

// field is one struct field: its JSON name, its shape, and how the Go
// field is declared. A pointer or a slice is left out when absent; a plain
// value with omitempty is left out when it is its zero value; a plain value
// without omitempty is always written, as its zero value when absent.
type field struct {
	name      string
	shape     *shape
	pointer   bool // a pointer (or slice or map) with omitempty
	omitEmpty bool // a plain value with omitempty
}

var (
	stringShape    = &shape{kind: shapeString}
	intShape       = &shape{kind: shapeInt}
	stringMapShape = &shape{kind: shapeStringMap}
	anyShape       = &shape{kind: shapeAny}
)

func object(fields ...field) *shape { return &shape{kind: shapeObject, fields: fields} }
func listOf(elem *shape) *shape     { return &shape{kind: shapeList, elem: elem} }

func required(name string, s *shape) field { return field{name: name, shape: s} }
func optional(name string, s *shape) field { return field{name: name, shape: s, omitEmpty: true} }
func pointer(name string, s *shape) field  { return field{name: name, shape: s, pointer: true} }

var (
	kReferenceShape = object(
		required("apiVersion", stringShape),
		required("kind", stringShape),
		required("name", stringShape),
		optional("namespace", stringShape),
	)
	destinationShape = object(
		pointer("ref", kReferenceShape),
		optional("uri", stringShape),
		optional("CACerts", stringShape),
		optional("audience", stringShape),
	)
	deliveryShape = object(
		pointer("deadLetterSink", destinationShape),
		pointer("retry", intShape),
		optional("backoffPolicy", stringShape),
		optional("backoffDelay", stringShape),
		optional("timeout", stringShape),
		optional("retryAfterMax", stringShape),
		optional("format", stringShape),
	)
	filterShape = func() *shape {
		s := &shape{kind: shapeObject}
		s.fields = []field{
			pointer("exact", stringMapShape),
			pointer("prefix", stringMapShape),
			pointer("suffix", stringMapShape),
			pointer("all", listOf(s)),
			pointer("any", listOf(s)),
			pointer("not", s),
			pointer("cesql", stringShape),
		}
		return s
	}()

	specShapes = map[string]*shape{
		knative.KindBroker: object(
			pointer("config", kReferenceShape),
			pointer("delivery", deliveryShape),
		),
		knative.KindTrigger: object(
			required("broker", stringShape),
			pointer("filter", object(pointer("attributes", stringMapShape))),
			pointer("filters", listOf(filterShape)),
			required("subscriber", destinationShape),
			pointer("delivery", deliveryShape),
		),
		knative.KindChannel: object(
			pointer("channelTemplate", object(
				required("apiVersion", stringShape),
				required("kind", stringShape),
				pointer("spec", anyShape),
			)),
			pointer("subscribers", listOf(object(
				optional("uid", stringShape),
				optional("generation", intShape),
				optional("subscriberUri", stringShape),
				optional("replyUri", stringShape),
				pointer("delivery", deliveryShape),
			))),
			pointer("delivery", deliveryShape),
		),
		knative.KindSubscription: object(
			required("channel", kReferenceShape),
			pointer("subscriber", destinationShape),
			pointer("reply", destinationShape),
			pointer("delivery", deliveryShape),
		),
	}
)

// SpecHash returns the hash the compiler would give spec, the spec of a
// live object of kind (Broker, Trigger, Channel or Subscription) as the
// API server returns it: "sha256:" and the hex digest of its JSON. A spec
// with a field the compiler's types do not have is an error: it cannot be
// the compiled one.
func SpecHash(kind string, spec map[string]any) (string, error) {
	b, err := specJSON(kind, spec)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:]), nil
}

// specJSON writes spec as encoding/json writes the compiler's spec type.
func specJSON(kind string, spec map[string]any) ([]byte, error) {
	s, ok := specShapes[kind]
	if !ok {
		return nil, fmt.Errorf("spec hash: unknown kind %q", kind)
	}
	var buf bytes.Buffer
	if err := write(&buf, s, spec, "spec"); err != nil {
		return nil, fmt.Errorf("spec hash: %w", err)
	}
	return buf.Bytes(), nil
}

// specHashes returns the hashes the live spec of kind may match. knc's
// Broker CRD defaults spec.config to {}, as the control-plane contract
// wants it set, after knc hashed the spec without it (and Brokers written
// by older versions of knc carry it in the manifest); such a Broker matches
// either hash.
func specHashes(kind string, spec map[string]any) ([]string, error) {
	h, err := SpecHash(kind, spec)
	if err != nil {
		return nil, err
	}
	hashes := []string{h}
	if kind == knative.KindBroker {
		if cfg, ok := spec["config"].(map[string]any); ok && len(cfg) == 0 {
			without := make(map[string]any, len(spec))
			for k, v := range spec {
				if k != "config" {
					without[k] = v
				}
			}
			h, err := SpecHash(kind, without)
			if err != nil {
				return nil, err
			}
			hashes = append(hashes, h)
		}
	}
	return hashes, nil
}

func write(buf *bytes.Buffer, s *shape, v any, path string) error {
	switch s.kind {
	case shapeString:
		str, ok := v.(string)
		if !ok && v != nil {
			return fmt.Errorf("%s: %T is not a string", path, v)
		}
		return writeJSON(buf, str)
	case shapeInt:
		n, err := toInt(v)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return writeJSON(buf, n)
	case shapeStringMap:
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return fmt.Errorf("%s: %T is not an object", path, v)
		}
		out := make(map[string]string, len(m))
		for k, x := range m {
			str, ok := x.(string)
			if !ok {
				return fmt.Errorf("%s.%s: %T is not a string", path, k, x)
			}
			out[k] = str
		}
		return writeJSON(buf, out)
	case shapeAny:
		return writeJSON(buf, v)
	case shapeList:
		l, ok := v.([]any)
		if !ok && v != nil {
			return fmt.Errorf("%s: %T is not a list", path, v)
		}
		buf.WriteByte('[')
		for i, x := range l {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := write(buf, s.elem, x, fmt.Sprintf("%s[%d]", path, i)); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
		return nil
	case shapeObject:
		m, ok := v.(map[string]any)
		if !ok && v != nil {
			return fmt.Errorf("%s: %T is not an object", path, v)
		}
		known := map[string]bool{}
		buf.WriteByte('{')
		first := true
		for _, f := range s.fields {
			known[f.name] = true
			x, present := m[f.name]
			if x == nil {
				present = false
			}
			switch {
			case f.pointer && !present:
				continue
			case f.pointer && isEmptyCollection(f.shape, x):
				// encoding/json leaves out an empty slice or map with
				// omitempty, though not an empty struct behind a pointer.
				continue
			case f.omitEmpty && isZero(f.shape, x):
				continue
			}
			if !first {
				buf.WriteByte(',')
			}
			first = false
			if err := writeJSON(buf, f.name); err != nil {
				return err
			}
			buf.WriteByte(':')
			if err := write(buf, f.shape, x, path+"."+f.name); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
		var unknown []string
		for k := range m {
			if !known[k] {
				unknown = append(unknown, k)
			}
		}
		if len(unknown) > 0 {
			sort.Strings(unknown)
			return fmt.Errorf("%s: fields the compiler does not know: %v", path, unknown)
		}
		return nil
	}
	return fmt.Errorf("%s: unknown shape", path)
}

func isEmptyCollection(s *shape, v any) bool {
	switch s.kind {
	case shapeList:
		l, _ := v.([]any)
		return len(l) == 0
	case shapeStringMap:
		m, _ := v.(map[string]any)
		return len(m) == 0
	case shapeAny:
		switch x := v.(type) {
		case map[string]any:
			return len(x) == 0
		case []any:
			return len(x) == 0
		}
	}
	return false
}

func isZero(s *shape, v any) bool {
	switch s.kind {
	case shapeString:
		str, _ := v.(string)
		return str == ""
	case shapeInt:
		n, err := toInt(v)
		return err == nil && n == 0
	}
	return v == nil
}

func toInt(v any) (int64, error) {
	switch n := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return n, nil
	case int:
		return int64(n), nil
	case int32:
		return int64(n), nil
	case float64:
		if n != float64(int64(n)) {
			return 0, fmt.Errorf("%v is not an integer", n)
		}
		return int64(n), nil
	case json.Number:
		return n.Int64()
	}
	return 0, fmt.Errorf("%T is not an integer", v)
}

// writeJSON writes v as encoding/json.Marshal does, HTML escaping included,
// since that is how the compiler hashes.
func writeJSON(buf *bytes.Buffer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	buf.Write(b)
	return nil
}
