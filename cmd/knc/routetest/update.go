package routetest

import (
	"bytes"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Update sets the expectations of the cases in outcomes (by case) to what
// they are, and returns the file's new text. Everything else in the file,
// comments and order included, is kept. When every value to change is on
// the line of its key, those values alone are replaced in the text, and
// the rest of the file stays byte for byte; otherwise the change is made
// in the parsed YAML tree, which is then written out again (indentation
// normalised). Destinations are written for a case that already states
// them or that declares replies.
func (f *File) Update(outcomes map[*Case]*Outcome) ([]byte, error) {
	if out, ok := f.splice(outcomes); ok {
		return out, nil
	}
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

// edit replaces src[start:end] with text.
type edit struct {
	start, end int
	text       string
}

// splice replaces the values of expect and destinations in the text, when
// each is on one line with its key. It reports false when it cannot, or
// when the result would not read back as the same cases.
func (f *File) splice(outcomes map[*Case]*Outcome) ([]byte, bool) {
	lineStart := []int{0}
	for i, b := range f.src {
		if b == '\n' {
			lineStart = append(lineStart, i+1)
		}
	}
	var edits []edit
	for _, c := range f.Cases {
		o, ok := outcomes[c]
		if !ok {
			continue
		}
		e, ok := f.valueEdit(lineStart, c.node, "expect", flowText(o.Reached))
		if !ok {
			return nil, false
		}
		edits = append(edits, e)
		if c.HasDestinations || len(c.Replies) > 0 {
			e, ok := f.valueEdit(lineStart, c.node, "destinations", flowText(o.Destinations))
			if !ok {
				return nil, false
			}
			edits = append(edits, e)
		}
	}
	slices.SortFunc(edits, func(a, b edit) int { return b.start - a.start })
	out := slices.Clone(f.src)
	for _, e := range edits {
		out = slices.Concat(out[:e.start], []byte(e.text), out[e.end:])
	}
	// The edit must read back as the outcomes it wrote.
	g, diags := Parse(f.Path, out, false)
	if len(diags) > 0 || len(g.Cases) != len(f.Cases) {
		return nil, false
	}
	for i, c := range f.Cases {
		o, ok := outcomes[c]
		if !ok {
			continue
		}
		if !slices.Equal(g.Cases[i].Expect, o.Reached) || g.Cases[i].HasDestinations && !slices.Equal(g.Cases[i].Destinations, o.Destinations) {
			return nil, false
		}
	}
	return out, true
}

// valueEdit is the edit that replaces the value of key in mapping m, when
// it is a scalar or a flow sequence on the line of its key.
func (f *File) valueEdit(lineStart []int, m *yaml.Node, key, text string) (edit, bool) {
	var k, v *yaml.Node
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			k, v = m.Content[i], m.Content[i+1]
		}
	}
	if v == nil || v.Line != k.Line || v.Line > len(lineStart) {
		return edit{}, false
	}
	lineEnd := len(f.src)
	if v.Line < len(lineStart) {
		lineEnd = lineStart[v.Line] - 1
	}
	line := f.src[lineStart[v.Line-1]:lineEnd]
	// Columns count characters; on an ASCII line they are bytes.
	for _, b := range line {
		if b >= 0x80 {
			return edit{}, false
		}
	}
	start := v.Column - 1
	if start < 0 || start >= len(line) {
		return edit{}, false
	}
	end := -1
	switch {
	case v.Kind == yaml.ScalarNode && v.Style == 0:
		if bytes.HasPrefix(line[start:], []byte(v.Value)) {
			end = start + len(v.Value)
		}
	case v.Kind == yaml.SequenceNode && v.Style&yaml.FlowStyle != 0:
		end = closingBracket(line, start)
	}
	if end < 0 {
		return edit{}, false
	}
	base := lineStart[v.Line-1]
	return edit{start: base + start, end: base + end, text: text}, true
}

// closingBracket returns the index after the ] that closes the [ at
// line[start], or -1.
func closingBracket(line []byte, start int) int {
	if line[start] != '[' {
		return -1
	}
	var quote byte
	for i := start + 1; i < len(line); i++ {
		switch b := line[i]; {
		case quote != 0:
			if b == quote {
				quote = 0
			}
		case b == '"' || b == '\'':
			quote = b
		case b == ']':
			return i + 1
		case b == '[':
			return -1
		}
	}
	return -1
}

// flowText writes names as a YAML flow sequence, quoting what a plain
// scalar cannot hold, or the word none.
func flowText(names []string) string {
	if len(names) == 0 {
		return None
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = n
		if strings.ContainsAny(n, ",[]{}#&*!|>'\"%@` ") || strings.Contains(n, ": ") {
			quoted[i] = strconv.Quote(n)
		}
	}
	return "[" + strings.Join(quoted, ", ") + "]"
}
