package kustomize

import (
	"maps"
	"slices"

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
// name matches them too (Knative Serving's Service gets the spec.selector
// of v1 Service). knc applies only the metadata field spec, and leaves a
// kustomization with an object of a kind that another spec might match,
// by its name alone, to krusty.
var (
	selectorKinds   = []string{"Service", "ReplicationController", "Deployment", "ReplicaSet", "DaemonSet", "StatefulSet", "Job", "CronJob", "PodDisruptionBudget", "NetworkPolicy"}
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
// transformer might write.
func setLabels(objs []*fastObject, l fastLabels) bool {
	if len(l.pairs) == 0 {
		return true
	}
	if l.selectors && anyKind(objs, selectorKinds) || l.templates && anyKind(objs, templateKinds) {
		return false
	}
	return setMetadataMap(objs, "labels", l.pairs)
}

// setAnnotations applies commonAnnotations as kustomize does, and reports
// false as setLabels does.
func setAnnotations(objs []*fastObject, pairs map[string]string) bool {
	if len(pairs) == 0 {
		return true
	}
	if anyKind(objs, annotationKinds) {
		return false
	}
	return setMetadataMap(objs, "annotations", pairs)
}

// setMetadataMap sets the pairs in metadata.labels or metadata.annotations
// of every object, as kustomize's label and annotation filters do with
// their metadata field spec (api/filters/labels, api/filters/fieldspec,
// kyaml's FieldSetter): key by key in sorted order, the map appended to
// metadata when it is missing, a value set over an existing one taking
// its style, a new one double-quoted when YAML 1.1 would read it as
// something other than a string. Asking kyaml whether it would is the
// costly part of kustomize's filter, which asks once per object; knc asks
// once per value.
func setMetadataMap(objs []*fastObject, field string, pairs map[string]string) bool {
	if len(pairs) == 0 {
		return true
	}
	keys := slices.Sorted(maps.Keys(pairs))
	styles := make([]yaml.Style, len(keys))
	for i, k := range keys {
		if kyaml.IsValueNonString(pairs[k]) {
			styles[i] = yaml.DoubleQuotedStyle
		}
	}
	for _, o := range objs {
		md := mapValue(o.node, "metadata")
		if md == nil || md.Kind != yaml.MappingNode {
			return false
		}
		m := mapValue(md, field)
		if m == nil {
			m = &yaml.Node{Kind: yaml.MappingNode}
			md.Content = append(md.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: field}, m)
		}
		if m.Kind != yaml.MappingNode {
			return false
		}
		for i, k := range keys {
			v := yaml.Node{Kind: yaml.ScalarNode, Tag: kyaml.NodeTagString, Value: pairs[k], Style: styles[i]}
			if old := mapValue(m, k); old != nil {
				v.Style = old.Style
				*old = v
				continue
			}
			m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &v)
		}
	}
	return true
}

func anyKind(objs []*fastObject, kinds []string) bool {
	for _, o := range objs {
		if slices.Contains(kinds, o.kind) {
			return true
		}
	}
	return false
}
