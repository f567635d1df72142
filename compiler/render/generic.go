package render

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// toGeneric converts a value of the model's types (structs with json tags,
// maps, slices, strings, numbers, bools) to generic JSON as encoding/json
// would encode and decode it, numbers as json.Number. Walking the value
// once is several times faster than encoding JSON and parsing it back, and
// a large build converts every object.
func toGeneric(v reflect.Value) (any, error) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil, nil
		}
		return toGeneric(v.Elem())
	case reflect.Struct:
		m := map[string]any{}
		if err := structFields(v, m); err != nil {
			return nil, err
		}
		return m, nil
	case reflect.Map:
		if v.IsNil() {
			return nil, nil
		}
		if v.Type().Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map key of type %s", v.Type().Key())
		}
		m := make(map[string]any, v.Len())
		it := v.MapRange()
		for it.Next() {
			x, err := toGeneric(it.Value())
			if err != nil {
				return nil, err
			}
			m[it.Key().String()] = x
		}
		return m, nil
	case reflect.Slice:
		if v.IsNil() {
			return nil, nil
		}
		l := make([]any, v.Len())
		for i := range l {
			x, err := toGeneric(v.Index(i))
			if err != nil {
				return nil, err
			}
			l[i] = x
		}
		return l, nil
	case reflect.String:
		return v.String(), nil
	case reflect.Bool:
		return v.Bool(), nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return json.Number(strconv.FormatInt(v.Int(), 10)), nil
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return json.Number(strconv.FormatUint(v.Uint(), 10)), nil
	case reflect.Float32, reflect.Float64:
		return json.Number(strconv.FormatFloat(v.Float(), 'g', -1, 64)), nil
	}
	return nil, fmt.Errorf("cannot convert a value of type %s", v.Type())
}

type fieldInfo struct {
	name      string
	index     int
	omitEmpty bool
	inline    bool
}

var fieldCache sync.Map // reflect.Type -> []fieldInfo

func fieldsOf(t reflect.Type) []fieldInfo {
	if f, ok := fieldCache.Load(t); ok {
		return f.([]fieldInfo)
	}
	var fields []fieldInfo
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" || !f.IsExported() && !f.Anonymous {
			continue
		}
		info := fieldInfo{name: name, index: i, omitEmpty: strings.Contains(opts, "omitempty")}
		if f.Anonymous && (name == "" || strings.Contains(opts, "inline")) {
			info.inline = true
		} else if name == "" {
			info.name = f.Name
		}
		fields = append(fields, info)
	}
	f, _ := fieldCache.LoadOrStore(t, fields)
	return f.([]fieldInfo)
}

func structFields(v reflect.Value, m map[string]any) error {
	for _, f := range fieldsOf(v.Type()) {
		fv := v.Field(f.index)
		if f.inline {
			if fv.Kind() == reflect.Pointer {
				if fv.IsNil() {
					continue
				}
				fv = fv.Elem()
			}
			if err := structFields(fv, m); err != nil {
				return err
			}
			continue
		}
		if f.omitEmpty && isEmpty(fv) {
			continue
		}
		x, err := toGeneric(fv)
		if err != nil {
			return fmt.Errorf("%s: %w", f.name, err)
		}
		m[f.name] = x
	}
	return nil
}

// isEmpty is encoding/json's notion of an empty value for omitempty.
func isEmpty(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Array, reflect.Map, reflect.Slice, reflect.String:
		return v.Len() == 0
	case reflect.Bool:
		return !v.Bool()
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return v.Int() == 0
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return v.Uint() == 0
	case reflect.Float32, reflect.Float64:
		return v.Float() == 0
	case reflect.Interface, reflect.Pointer:
		return v.IsNil()
	}
	return false
}
