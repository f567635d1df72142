package kustomize

import (
	"maps"
	"slices"
	"strings"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// fastLabels is an entry of labels, or commonLabels, which kustomize
// applies as an entry that includes selectors, after those of labels.
type fastLabels struct {
	pairs map[string]string
	// selectors and templates are includeSelectors and includeTemplates.
	selectors, templates bool
}

// kustomize's label and annotation transformers write metadata.labels or
// metadata.annotations of every object, and, when the entry asks for
// selectors or templates, other fields of the kinds their built-in field
// specs name (api/internal/konfig/builtinpluginconsts: commonlabels.go,
// templatelabels.go, commonannotations.go). Some of those specs name a
// kind alone, or a kind and a version, so that a custom kind of the same
// name matches them too: Knative Serving's Service gets the spec.selector
// of v1 Service. knc writes metadata, and the selector of every Service of
// version v1, whatever its group; it leaves a kustomization with an
// object of a kind that another spec might match, by its name alone, to
// krusty.
var (
	// selectorKinds are the kinds besides Service whose fields the
	// selector field specs name.
	selectorKinds   = []string{"ReplicationController", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "CronJob", "PodDisruptionBudget", "NetworkPolicy"}
	templateKinds   = []string{"ReplicationController", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "CronJob"}
	annotationKinds = templateKinds
)

// labelEntry reads an entry of labels: pairs, includeSelectors and
// includeTemplates.
func labelEntry(n *yaml.Node) (fastLabels, bool) {
	var l fastLabels
	if n.Kind != yaml.MappingNode {
		return l, false
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		if seen[key] {
			return l, false
		}
		seen[key] = true
		var ok bool
		switch key {
		case "pairs":
			l.pairs, ok = stringMap(value)
		case "includeSelectors":
			l.selectors, ok = boolValue(value)
		case "includeTemplates":
			l.templates, ok = boolValue(value)
		}
		if !ok {
			return l, false
		}
	}
	return l, true
}

// stringMap reads a map of strings, as kustomize reads labels and
// annotations: keys and values are strings as YAML 1.2 and 1.1 read them.
func stringMap(n *yaml.Node) (map[string]string, bool) {
	if n.Kind != yaml.MappingNode {
		return nil, false
	}
	m := make(map[string]string, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !isString(k) || !isString(v) || k.Style == 0 && kyaml.IsValueNonString(k.Value) || v.Style == 0 && kyaml.IsValueNonString(v.Value) {
			return nil, false
		}
		if _, dup := m[k.Value]; dup {
			return nil, false
		}
		m[k.Value] = v.Value
	}
	return m, true
}

func boolValue(n *yaml.Node) (bool, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Value != "true" && n.Value != "false" {
		return false, false
	}
	return n.Value == "true", true
}

// setLabels applies a label transformer as kustomize does, and reports
// false when one of the objects has a kind whose other fields the
// transformer might write, but for the selector of a Service of version
// v1, which knc writes too.
func setLabels(objs []*fastObject, l fastLabels) bool {
	if len(l.pairs) == 0 {
		return true
	}
	if l.selectors && anyKind(objs, selectorKinds) || l.templates && anyKind(objs, templateKinds) {
		return false
	}
	return setMaps(objs, l.pairs, func(o *fastObject) []*yaml.Node {
		// kustomize sorts its field specs by kind, Service's before those
		// of every kind.
		if l.selectors && o.kind == "Service" && o.version == "v1" {
			return []*yaml.Node{lookupCreate(o.node, "spec", "selector"), lookupCreate(o.node, "metadata", "labels")}
		}
		return []*yaml.Node{lookupCreate(o.node, "metadata", "labels")}
	})
}

// setAnnotations applies commonAnnotations as kustomize does, and reports
// false when one of the objects has a kind whose templates it writes.
func setAnnotations(objs []*fastObject, pairs map[string]string) bool {
	if len(pairs) == 0 {
		return true
	}
	if anyKind(objs, annotationKinds) {
		return false
	}
	return setMaps(objs, pairs, func(o *fastObject) []*yaml.Node {
		return []*yaml.Node{lookupCreate(o.node, "metadata", "annotations")}
	})
}

// setMaps sets the pairs in the maps of each object that fields gives, as
// kustomize's label and annotation filters do (api/filters/labels,
// api/filters/fieldspec, kyaml's FieldSetter): key by key in sorted order,
// in each map in turn, a value set over an existing one taking its style,
// a new one double-quoted when YAML 1.1 would read it as something other
// than a string. kustomize writes one node per key and object: it appears
// in each map that lacked the key, and takes the style of each it
// replaced, as it goes. Asking kyaml whether YAML 1.1 reads a value as a
// string is the costly part of kustomize's filter, which asks once per
// object; knc asks once per value.
func setMaps(objs []*fastObject, pairs map[string]string, fields func(*fastObject) []*yaml.Node) bool {
	keys := slices.Sorted(maps.Keys(pairs))
	nonString := make([]bool, len(keys))
	for i, k := range keys {
		nonString[i] = kyaml.IsValueNonString(pairs[k])
	}
	for _, o := range objs {
		ms := fields(o)
		if slices.Contains(ms, nil) {
			return false
		}
		for i, k := range keys {
			v := &yaml.Node{Kind: yaml.ScalarNode, Tag: kyaml.NodeTagString, Value: pairs[k]}
			for _, m := range ms {
				if v.Style == 0 && nonString[i] {
					v.Style = yaml.DoubleQuotedStyle
				}
				if old := mapValue(m, k); old != nil {
					v.Style = old.Style
					*old = *v
					continue
				}
				m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
			}
		}
	}
	return true
}

// lookupCreate finds the map at path in n, appending empty maps where
// fields are missing as kustomize does, or returns nil when a field on
// the way is not a map.
func lookupCreate(n *yaml.Node, path ...string) *yaml.Node {
	for _, field := range path {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		v := mapValue(n, field)
		if v == nil {
			v = &yaml.Node{Kind: yaml.MappingNode}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: field}, v)
		}
		n = v
	}
	if n.Kind != yaml.MappingNode {
		return nil
	}
	return n
}

func anyKind(objs []*fastObject, kinds []string) bool {
	for _, o := range objs {
		if slices.Contains(kinds, o.kind) {
			return true
		}
	}
	return false
}

// rewriteAnnotations rewrites metadata.annotations as kyaml's
// RNode.SetAnnotations(RNode.GetAnnotations()) does: the field removed,
// and, when the map held entries, appended to metadata again, its keys
// sorted and each value a new string node, literal when it spans lines,
// double-quoted when YAML 1.1 would read it as something other than a
// string. kyaml asks that for every value of every object; nonString
// remembers the answers over a render. Maps out of the ordinary go to
// kyaml itself.
func rewriteAnnotations(node *yaml.Node, nonString map[string]bool) error {
	md := mapValue(node, "metadata")
	if md == nil || md.Kind != yaml.MappingNode {
		return kyamlRewriteAnnotations(node)
	}
	at := -1
	for i := 0; i+1 < len(md.Content); i += 2 {
		if md.Content[i].Value != "annotations" {
			continue
		}
		if at >= 0 {
			return kyamlRewriteAnnotations(node)
		}
		at = i
	}
	if at < 0 {
		return nil
	}
	m := md.Content[at+1]
	if m.Kind != yaml.MappingNode {
		return kyamlRewriteAnnotations(node)
	}
	pairs := make(map[string]string, len(m.Content)/2)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if _, dup := pairs[k.Value]; dup || v.Kind != yaml.ScalarNode || !utf8.ValidString(v.Value) {
			return kyamlRewriteAnnotations(node)
		}
		pairs[k.Value] = v.Value
	}
	md.Content = slices.Delete(md.Content, at, at+2)
	if len(pairs) == 0 {
		return nil
	}
	out := &yaml.Node{Kind: yaml.MappingNode, Content: make([]*yaml.Node, 0, 2*len(pairs))}
	md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: "annotations"}, out)
	for _, k := range slices.Sorted(maps.Keys(pairs)) {
		v := &yaml.Node{Kind: yaml.ScalarNode, Tag: kyaml.NodeTagString, Value: pairs[k]}
		if strings.Contains(v.Value, "\n") {
			v.Style = yaml.LiteralStyle
		} else {
			quote, ok := nonString[v.Value]
			if !ok {
				quote = kyaml.IsValueNonString(v.Value)
				nonString[v.Value] = quote
			}
			if quote {
				v.Style = yaml.DoubleQuotedStyle
			}
		}
		out.Content = append(out.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, v)
	}
	return nil
}

func kyamlRewriteAnnotations(node *yaml.Node) error {
	rn := kyaml.NewRNode(node)
	return rn.SetAnnotations(rn.GetAnnotations())
}
