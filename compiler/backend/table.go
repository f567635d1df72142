package backend

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/knc-dev/knc/internal/parallel"
	"github.com/knc-dev/knc/internal/routing"
)

// MaxTableBytes bounds the encoded routing table of one ConfigMap: the API
// server refuses a ConfigMap whose data exceeds 1 MiB, and the rest of the
// object needs a little room. A namespace's table that takes more is split
// across several ConfigMaps.
const MaxTableBytes = 1<<20 - 4<<10

// EncodeTable encodes a table exactly as routing.Encode does, indented for
// readable diffs, unless that does not fit in a ConfigMap; then compactly,
// which takes about a third less.
func EncodeTable(t *routing.Table) ([]byte, error) {
	e, err := NewTableEncoder(t)
	if err != nil {
		return nil, err
	}
	return e.All(), nil
}

// TableEncoder encodes a table, and the table of each of its namespaces,
// encoding every entry once: a build
// writes both, and encoding thousands of routes is much of its work.
type TableEncoder struct {
	table     *routing.Table
	brokers   [][]byte
	channels  [][]byte
	pings     [][]byte
	sources   [][]byte
	sequences [][]byte
	parallels [][]byte
}

// NewTableEncoder encodes the entries of t, on every core.
func NewTableEncoder(t *routing.Table) (*TableEncoder, error) {
	e := &TableEncoder{table: t, brokers: make([][]byte, len(t.Brokers)), channels: make([][]byte, len(t.Channels)),
		sequences: make([][]byte, len(t.Sequences)), parallels: make([][]byte, len(t.Parallels))}
	nb, nc, ns := len(t.Brokers), len(t.Channels), len(t.Sequences)
	errs := make([]error, nb+nc+ns+len(t.Parallels))
	parallel.For(len(errs), func(i int) {
		switch {
		case i < nb:
			e.brokers[i], errs[i] = compactJSON(&t.Brokers[i])
		case i < nb+nc:
			e.channels[i-nb], errs[i] = compactJSON(&t.Channels[i-nb])
		case i < nb+nc+ns:
			e.sequences[i-nb-nc], errs[i] = compactJSON(&t.Sequences[i-nb-nc])
		default:
			e.parallels[i-nb-nc-ns], errs[i] = compactJSON(&t.Parallels[i-nb-nc-ns])
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, fmt.Errorf("encoding routing table: %w", err)
		}
	}
	// A table holds few sources: no need to spread them.
	e.pings = make([][]byte, len(t.PingSources))
	for i := range t.PingSources {
		b, err := compactJSON(&t.PingSources[i])
		if err != nil {
			return nil, fmt.Errorf("encoding routing table: %w", err)
		}
		e.pings[i] = b
	}
	e.sources = make([][]byte, len(t.Sources))
	for i := range t.Sources {
		b, err := compactJSON(&t.Sources[i])
		if err != nil {
			return nil, fmt.Errorf("encoding routing table: %w", err)
		}
		e.sources[i] = b
	}
	return e, nil
}

// All returns the whole table.
func (e *TableEncoder) All() []byte {
	return e.assemble(func(string) bool { return true })
}

// Namespace returns the table of the entries of ns, with the PingSources
// its runtime fires (routing.PingSource.FiredIn) and the other sources
// feeding it (routing.EventSource.ShownIn).
func (e *TableEncoder) Namespace(ns string) []byte {
	return e.assemble(func(n string) bool { return n == ns })
}

// assemble writes the table as encoding/json would encode a routing.Table
// holding the selected entries, then indents it.
func (e *TableEncoder) assemble(keep func(namespace string) bool) []byte {
	var buf bytes.Buffer
	size := 100
	for i, b := range e.brokers {
		if keep(e.table.Brokers[i].Namespace) {
			size += len(b) + 1
		}
	}
	for i, c := range e.channels {
		if keep(e.table.Channels[i].Namespace) {
			size += len(c) + 1
		}
	}
	for i, p := range e.pings {
		if keep(e.table.PingSources[i].FiredIn()) {
			size += len(p) + 1
		}
	}
	for i, s := range e.sources {
		if keep(e.table.Sources[i].ShownIn()) {
			size += len(s) + 1
		}
	}
	for i, s := range e.sequences {
		if keep(e.table.Sequences[i].Namespace) {
			size += len(s) + 1
		}
	}
	for i, p := range e.parallels {
		if keep(e.table.Parallels[i].Namespace) {
			size += len(p) + 1
		}
	}
	buf.Grow(size)
	fmt.Fprintf(&buf, `{"apiVersion":%q,"kind":%q`, routing.APIVersion, routing.Kind)
	list := func(name string, items [][]byte, namespace func(int) string) {
		n := 0
		for i, item := range items {
			if !keep(namespace(i)) {
				continue
			}
			if n == 0 {
				fmt.Fprintf(&buf, `,%q:[`, name)
			} else {
				buf.WriteByte(',')
			}
			buf.Write(item)
			n++
		}
		if n > 0 {
			buf.WriteByte(']')
		}
	}
	list("brokers", e.brokers, func(i int) string { return e.table.Brokers[i].Namespace })
	list("channels", e.channels, func(i int) string { return e.table.Channels[i].Namespace })
	list("pingSources", e.pings, func(i int) string { return e.table.PingSources[i].FiredIn() })
	list("sources", e.sources, func(i int) string { return e.table.Sources[i].ShownIn() })
	list("sequences", e.sequences, func(i int) string { return e.table.Sequences[i].Namespace })
	list("parallels", e.parallels, func(i int) string { return e.table.Parallels[i].Namespace })
	buf.WriteByte('}')
	indented := indentJSON(buf.Bytes())
	if len(indented) <= MaxTableBytes {
		return indented
	}
	buf.WriteByte('\n')
	return buf.Bytes()
}

func compactJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// indentJSON indents compact JSON by two spaces, as json.Indent does, and
// ends it with a newline. Its input has no whitespace outside strings,
// which makes it several times faster than encoding/json's scanner.
func indentJSON(src []byte) []byte {
	out := make([]byte, 0, len(src)+len(src)/2)
	depth := 0
	newline := func() {
		out = append(out, '\n')
		for range depth {
			out = append(out, ' ', ' ')
		}
	}
	for i := 0; i < len(src); i++ {
		c := src[i]
		switch c {
		case '"':
			// Copy the string through its closing quote.
			j := i + 1
			for ; j < len(src) && src[j] != '"'; j++ {
				if src[j] == '\\' {
					j++
				}
			}
			out = append(out, src[i:j+1]...)
			i = j
		case '{', '[':
			out = append(out, c)
			if i+1 < len(src) && (src[i+1] == '}' || src[i+1] == ']') {
				out = append(out, src[i+1])
				i++
				continue
			}
			depth++
			newline()
		case '}', ']':
			depth--
			newline()
			out = append(out, c)
		case ',':
			out = append(out, c)
			newline()
		case ':':
			out = append(out, ':', ' ')
		default:
			out = append(out, c)
		}
	}
	return append(out, '\n')
}
