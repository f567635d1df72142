package check

import (
	"bytes"
	"encoding/json"

	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
)

// duckSource reads the sink and CloudEvent overrides of an object of a
// kind knc does not model but takes as a source. A spec.sink that is not
// a Destination (another project may use the name for something else) is
// a warning and the object is not taken as a source: knc cannot tell
// another CRD's field from a mistake.
func (c *checker) duckSource(doc *load.Document, ns string) (*model.DuckSource, diag.List) {
	var diags diag.List
	if _, ok := doc.KeyPos("spec.sink"); !ok {
		return nil, nil
	}
	sink := doc.Lookup("spec.sink")
	src := &model.DuckSource{TypeMeta: model.TypeMeta{APIVersion: doc.APIVersion, Kind: doc.Kind}}
	src.Metadata.Name, src.Metadata.Namespace = doc.Name, doc.Namespace
	if !decodeStrict(sink, &src.Spec.Sink) || src.Spec.Sink == nil {
		diags.AddWarning(doc.PosOf("spec.sink"), "spec.sink", "is not a Knative Destination (ref, uri, CACerts, audience), so knc does not check where this %s sends its events", doc.Kind)
		return nil, diags
	}
	if _, ok := doc.KeyPos("spec.ceOverrides"); ok && !decodeStrict(doc.Lookup("spec.ceOverrides"), &src.Spec.CEOverrides) {
		diags.AddWarning(doc.PosOf("spec.ceOverrides"), "spec.ceOverrides", "is not Knative's CloudEvent overrides ({extensions: {NAME: VALUE}}), so knc does not check it")
		src.Spec.CEOverrides = nil
	}
	for _, e := range src.Validate(c.features, ns) {
		if e.Warning {
			diags.AddWarning(doc.PosOf(e.Path), e.Path, "%s", e.Message)
		} else {
			diags.Add(doc.PosOf(e.Path), e.Path, "%s", e.Message)
		}
	}
	src.SetDefaults(c.defaults)
	return src, diags
}

// kubectlTemplate returns a ContainerSource's pod template as kubectl and
// Argo CD send it: an unquoted on, off, yes, no, y or n (YAML 1.1) is a
// boolean, so that a string field holding one is refused as Knative's
// decoding refuses it. Nil when the template is absent or not a mapping,
// which decoding reports.
func kubectlTemplate(doc *load.Document) map[string]any {
	if _, ok := doc.KeyPos("spec.template"); !ok {
		return nil
	}
	n := doc.Lookup("spec.template")
	if n.Kind != yaml.MappingNode {
		return nil
	}
	var v any
	if err := yaml11(n).Decode(&v); err != nil {
		return nil
	}
	m, _ := v.(map[string]any)
	return m
}

// yaml11 copies a tree, retagging as booleans the plain scalars YAML 1.1
// reads as booleans.
func yaml11(n *yaml.Node) *yaml.Node {
	c := *n
	if n.Kind == yaml.ScalarNode && n.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle|yaml.LiteralStyle|yaml.FoldedStyle) == 0 && n.Tag == "!!str" {
		switch n.Value {
		case "y", "Y", "yes", "Yes", "YES", "on", "On", "ON":
			c.Tag, c.Value = "!!bool", "true"
		case "n", "N", "no", "No", "NO", "off", "Off", "OFF":
			c.Tag, c.Value = "!!bool", "false"
		}
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, k := range n.Content {
		if n.Kind == yaml.MappingNode && i%2 == 0 {
			c.Content[i] = k
			continue
		}
		c.Content[i] = yaml11(k)
	}
	return &c
}

// decodeStrict decodes a YAML subtree into out through JSON, refusing
// fields out does not have.
func decodeStrict(n interface{ Decode(any) error }, out any) bool {
	var v any
	if err := n.Decode(&v); err != nil {
		return false
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return false
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(out) == nil
}
