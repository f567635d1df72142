package routetest

import (
	"bytes"
	"fmt"

	"go.yaml.in/yaml/v3"
)

// Update sets the expectations of the cases in outcomes (by case) to what
// they are, and returns the file's new text. Everything else in the file,
// comments and order included, is kept: the change is made in the parsed
// YAML tree, and only the values of expect and destinations are replaced.
// Destinations are written for a case that already states them or that
// declares replies.
func (f *File) Update(outcomes map[*Case]*Outcome) ([]byte, error) {
	for _, c := range f.Cases {
		o, ok := outcomes[c]
		if !ok {
			continue
		}
		setValue(c.node, "expect", namesNode(o.Reached, yaml.FlowStyle), "event")
		if c.HasDestinations || len(c.Replies) > 0 {
			after := "expect"
			if c.Replies != nil {
				after = "replies"
			}
			setValue(c.node, "destinations", namesNode(o.Destinations, 0), after)
		}
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(f.root); err != nil {
		return nil, fmt.Errorf("%s: writing the updated cases: %w", f.Path, err)
	}
	if err := enc.Close(); err != nil {
		return nil, fmt.Errorf("%s: writing the updated cases: %w", f.Path, err)
	}
	return buf.Bytes(), nil
}

// namesNode is a list of names, or the word none. Trigger names go in
// flow style, [a, b], which keeps a case's outcome on one line; URLs read
// better one per line.
func namesNode(names []string, style yaml.Style) *yaml.Node {
	if len(names) == 0 {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: None}
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: style}
	for _, name := range names {
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: name})
	}
	return n
}

// setValue replaces the value of key in mapping m, keeping the comments of
// the old value, or adds key after the key named after (at the end when
// there is none).
func setValue(m *yaml.Node, key string, value *yaml.Node, after string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			old := m.Content[i+1]
			value.LineComment, value.HeadComment, value.FootComment = old.LineComment, old.HeadComment, old.FootComment
			m.Content[i+1] = value
			return
		}
	}
	k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}
	at := len(m.Content)
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == after {
			at = i + 2
		}
	}
	m.Content = append(m.Content[:at], append([]*yaml.Node{k, value}, m.Content[at:]...)...)
}
