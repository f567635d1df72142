package diff

import (
	"bytes"
	"cmp"
	"encoding/json"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/redact"
)

// compareObjects compares every object of the two sets, Knative or not,
// and the project config.
func compareObjects(base, head Side) []ObjectChange {
	var out []ObjectChange
	if c, ok := compareConfig(base.Config, head.Config); ok {
		out = append(out, c)
	}
	var added, removed []ObjectChange
	addedValues, removedValues := map[int]any{}, map[int]any{}
	// The objects a Sequence or Parallel compiles into change with it:
	// the flow's own change says what changed.
	for _, he := range head.Set.Entries {
		if he.Generated() {
			continue
		}
		be, ok := base.Set.Index[he.Key]
		if !ok {
			addedValues[len(added)] = value(he)
			added = append(added, ObjectChange{Change: Added, Kind: kindLabel(he.Key), Namespace: he.Key.Namespace, Name: he.Key.Name, Pos: objectPos(he)})
			continue
		}
		if same(be, he) {
			continue
		}
		var fields []FieldChange
		diffValues("", value(be), value(he), func(path string, old, new any) {
			fields = append(fields, FieldChange{Path: path, Old: masked(old), New: masked(new), Pos: he.Doc.PosOf(path)})
		})
		if len(fields) > 0 {
			out = append(out, ObjectChange{Change: Changed, Kind: kindLabel(he.Key), Namespace: he.Key.Namespace, Name: he.Key.Name, Pos: objectPos(he), Fields: fields})
		}
	}
	for _, be := range base.Set.Entries {
		if be.Generated() {
			continue
		}
		if _, ok := head.Set.Index[be.Key]; !ok {
			removedValues[len(removed)] = value(be)
			removed = append(removed, ObjectChange{Change: Removed, Kind: kindLabel(be.Key), Namespace: be.Key.Namespace, Name: be.Key.Name, Pos: objectPos(be)})
		}
	}
	findRenames(added, removed, addedValues, removedValues)
	out = append(out, added...)
	out = append(out, removed...)
	slices.SortStableFunc(out, func(a, b ObjectChange) int {
		return cmp.Or(cmp.Compare(kindRank(a.Kind), kindRank(b.Kind)), cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name))
	})
	return out
}

// findRenames notes, for each added object, the one removed object of the
// same kind and namespace whose content is the same but for its name. A
// rename is a new object to Kubernetes; saying so helps to read the diff.
func findRenames(added, removed []ObjectChange, addedValues, removedValues map[int]any) {
	for i := range added {
		match := -1
		for j := range removed {
			if removed[j].Kind != added[i].Kind || removed[j].Namespace != added[i].Namespace {
				continue
			}
			if reflect.DeepEqual(withoutName(addedValues[i]), withoutName(removedValues[j])) {
				if match >= 0 {
					match = -2
					break
				}
				match = j
			}
		}
		if match >= 0 {
			added[i].RenamedFrom = removed[match].Name
		}
	}
}

func withoutName(v any) any {
	m, ok := v.(map[string]any)
	if !ok {
		return v
	}
	c := maps.Clone(m)
	if md, ok := c["metadata"].(map[string]any); ok {
		md = maps.Clone(md)
		delete(md, "name")
		c["metadata"] = md
	}
	return c
}

// same reports cheaply whether an object is unchanged, which most are:
// typed objects by their JSON encoding, others as decoded.
func same(a, b *model.Entry) bool {
	if a.Object != nil && b.Object != nil {
		ab, aerr := json.Marshal(withoutStatus(a.Object))
		bb, berr := json.Marshal(withoutStatus(b.Object))
		return aerr == nil && berr == nil && bytes.Equal(ab, bb)
	}
	if a.Object != nil || b.Object != nil {
		return false
	}
	var av, bv any
	if a.Doc.Node().Decode(&av) != nil || b.Doc.Node().Decode(&bv) != nil {
		return false
	}
	return reflect.DeepEqual(av, bv)
}

// withoutStatus returns what of an object is compared: all but its
// status, which the cluster owns.
func withoutStatus(o model.Object) any {
	switch o := o.(type) {
	case *model.Broker:
		c := *o
		c.Status = nil
		return &c
	case *model.Trigger:
		c := *o
		c.Status = nil
		return &c
	case *model.Channel:
		c := *o
		c.Status = nil
		return &c
	case *model.Subscription:
		c := *o
		c.Status = nil
		return &c
	}
	return o
}

func objectPos(e *model.Entry) diag.Pos {
	return e.Doc.PosOf("")
}

// kindLabel names a kind as knc's messages do: with its group unless the
// group is Knative's or the core one.
func kindLabel(k model.Key) string {
	return knative.KindLabel(k.Group, k.Kind)
}

// value returns an object as plain JSON data: a Knative object after
// defaulting (so that writing out a default is no change), any other
// object as written. Status is left out: the cluster owns it.
func value(e *model.Entry) any {
	var v any
	if e.Object != nil {
		v = jsonValue(e.Object)
	} else {
		var raw any
		if err := e.Doc.Node().Decode(&raw); err == nil {
			v = jsonValue(raw)
		}
	}
	if m, ok := v.(map[string]any); ok {
		delete(m, "status")
	}
	return v
}

// jsonValue round-trips v through JSON, so that both sides hold the same
// types (float64 numbers, map[string]any objects).
func jsonValue(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return nil
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil
	}
	return out
}

// masked hides the password and query values of a URI in a value a
// report shows; a change of a password alone still shows as a change.
func masked(v any) any {
	if s, ok := v.(string); ok && strings.Contains(s, "://") {
		return redact.URI(s)
	}
	return v
}

// diffValues calls report for each path at which old and new differ. Lists
// are compared element by element.
func diffValues(path string, old, new any, report func(path string, old, new any)) {
	switch o := old.(type) {
	case map[string]any:
		n, ok := new.(map[string]any)
		if !ok {
			break
		}
		keys := slices.Sorted(maps.Keys(o))
		for k := range n {
			if _, ok := o[k]; !ok {
				keys = append(keys, k)
			}
		}
		slices.Sort(keys)
		for _, k := range keys {
			ov, inOld := o[k]
			nv, inNew := n[k]
			p := load.JoinKey(path, k)
			switch {
			case !inOld:
				report(p, nil, nv)
			case !inNew:
				report(p, ov, nil)
			default:
				diffValues(p, ov, nv, report)
			}
		}
		return
	case []any:
		n, ok := new.([]any)
		if !ok {
			break
		}
		for i := range max(len(o), len(n)) {
			p := load.JoinIndex(path, i)
			switch {
			case i >= len(o):
				report(p, nil, n[i])
			case i >= len(n):
				report(p, o[i], nil)
			default:
				diffValues(p, o[i], n[i], report)
			}
		}
		return
	}
	if !reflect.DeepEqual(old, new) {
		report(path, old, new)
	}
}

// compareConfig compares knc.yaml, which changes how everything resolves.
func compareConfig(base, head *project.Config) (ObjectChange, bool) {
	if base == nil || head == nil {
		return ObjectChange{}, false
	}
	var fields []FieldChange
	pos := diag.Pos{File: head.File}
	diffValues("", jsonValue(base), jsonValue(head), func(path string, old, new any) {
		fields = append(fields, FieldChange{Path: path, Old: masked(old), New: masked(new), Pos: pos})
	})
	if len(fields) == 0 {
		return ObjectChange{}, false
	}
	name := filepath.Base(head.File)
	if head.File == "" {
		name = filepath.Base(base.File)
	}
	if name == "." || name == "" {
		name = "(defaults)"
	}
	return ObjectChange{Change: Changed, Kind: "Config", Name: name, Pos: pos, Fields: fields}, true
}
