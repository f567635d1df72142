package kustomize

import (
	"slices"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// merger merges a strategic-merge patch into an object the way kyaml's
// merge2 does when no schema describes the kind: maps merge key by key,
// a patch's scalar or list replaces the object's, null deletes a field
// and $patch: delete a map. Its effects on style and comments are
// kyaml's too, as the rendered nodes are compared with krusty's. ok turns
// false on what the subset leaves to krusty.
type merger struct {
	ok bool
}

// directive removes a map's $patch field and returns its value; merge, the
// default, is "".
func (m *merger) directive(p *yaml.Node) string {
	for i := 0; i+1 < len(p.Content); i += 2 {
		if p.Content[i].Value != "$patch" {
			continue
		}
		v := p.Content[i+1]
		p.Content = slices.Delete(p.Content, i, i+2)
		switch {
		case v.Kind == yaml.ScalarNode && v.Value == "merge":
			return ""
		case v.Kind == yaml.ScalarNode && (v.Value == "delete" || v.Value == "replace"):
			return v.Value
		default:
			m.ok = false
			return "unknown"
		}
	}
	return ""
}

// comments gives d the comments p has.
func (m *merger) comments(d, p *yaml.Node) {
	if p.HeadComment != "" {
		d.HeadComment = p.HeadComment
	}
	if p.LineComment != "" {
		d.LineComment = p.LineComment
	}
	if p.FootComment != "" {
		d.FootComment = p.FootComment
	}
}

func isNull(n *yaml.Node) bool { return n.Tag == "!!null" }

// quote double-quotes a plain string that YAML 1.1 would read as another
// type, as kyaml does to each scalar it sets.
func quote(n *yaml.Node) {
	if kyaml.IsYNodeString(n) && n.Style == 0 && kyaml.IsYaml1_1NonString(n) {
		n.Style = yaml.DoubleQuotedStyle
	}
}

// sortedKeys returns the keys of the maps, each once, sorted.
func sortedKeys(maps ...*yaml.Node) []string {
	var keys []string
	for _, n := range maps {
		for i := 0; i+1 < len(n.Content); i += 2 {
			keys = append(keys, n.Content[i].Value)
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func entry(n *yaml.Node, key string) (int, *yaml.Node) {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return i, n.Content[i+1]
		}
	}
	return -1, nil
}

func remove(n *yaml.Node, key string) {
	if i, _ := entry(n, key); i >= 0 {
		n.Content = slices.Delete(n.Content, i, i+2)
	}
}

// fields merges the fields of map p into map d, key by key in sorted
// order: kyaml walks them so, and appends new fields in that order.
func (m *merger) fields(d, p *yaml.Node) {
	for _, key := range sortedKeys(d, p) {
		if !m.ok {
			return
		}
		_, dv := entry(d, key)
		pi, pv := entry(p, key)
		switch {
		case pv == nil:
			m.keep(dv)
		case dv == nil:
			if isNull(pv) {
				continue
			}
			if pv.Kind == yaml.MappingNode {
				if m.directive(pv) == "delete" {
					continue
				}
				m.own(pv)
			}
			quote(pv)
			k := p.Content[pi]
			d.Content = append(d.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: key, Style: k.Style}, pv)
		case isNull(dv):
			m.ok = false
		case isNull(pv):
			remove(d, key)
		case dv.Kind != pv.Kind:
			m.ok = false // kustomize's error
		case dv.Kind == yaml.MappingNode:
			m.comments(dv, pv)
			if len(dv.Content) == 0 {
				dv.Style = pv.Style
			}
			switch m.directive(pv) {
			case "delete":
				remove(d, key)
			case "replace":
				m.own(pv)
				style := dv.Style
				*dv = *pv
				dv.Style = style
			case "":
				m.fields(dv, pv)
			}
		case dv.Kind == yaml.SequenceNode:
			if len(dv.Content) == 0 {
				dv.Style = pv.Style
			}
			style := dv.Style
			*dv = *pv
			dv.Style = style
		case dv.Kind == yaml.ScalarNode:
			style := dv.Style
			*dv = *pv
			dv.Style = style
		default:
			m.ok = false
		}
	}
}

// keep walks what the object has and the patch does not: kyaml sets each
// map's scalars again, quoting them.
func (m *merger) keep(n *yaml.Node) {
	switch {
	case isNull(n):
		m.ok = false
	case n.Kind == yaml.ScalarNode:
		quote(n)
	case n.Kind == yaml.MappingNode:
		for i := 1; i < len(n.Content); i += 2 {
			m.keep(n.Content[i])
		}
	}
}

// own walks a map of the patch that becomes the object's: its nulls and
// deleted maps go, its directives are removed and its scalars quoted.
func (m *merger) own(n *yaml.Node) {
	for _, key := range sortedKeys(n) {
		if !m.ok {
			return
		}
		_, v := entry(n, key)
		switch {
		case isNull(v):
			remove(n, key)
		case v.Kind == yaml.MappingNode:
			if m.directive(v) == "delete" {
				remove(n, key)
				continue
			}
			m.own(v)
		case v.Kind == yaml.ScalarNode:
			quote(v)
		}
	}
}
