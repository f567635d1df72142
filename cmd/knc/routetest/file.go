package routetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cloudevents/sdk-go/v2/event"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
)

// None is how a file says that an event reaches nothing.
const None = "none"

// File is one test file, with its parsed YAML kept for --update.
type File struct {
	Path  string
	Cases []*Case
	root  *yaml.Node
	src   []byte
}

// Case is one event sent to one Broker or Channel, or made by one source
// and sent into its sink, and what it must reach.
type Case struct {
	Name string
	Pos  diag.Pos
	// Target is the Broker or Channel the event is sent to, or the source
	// whose event it is.
	Target Target
	// Event is the event the case sends; nil for a PingSource's case,
	// which sends the PingSource's own.
	Event *event.Event
	// Expect is the exact set of Trigger or Subscription names reached, in
	// the target's namespace; empty means none.
	Expect []string
	// Replies maps a Trigger or Subscription name to the event its
	// subscriber answers with.
	Replies map[string]*event.Event
	// Destinations, when HasDestinations, is the exact set of final
	// destinations after forwards and replies.
	Destinations    []string
	HasDestinations bool

	node *yaml.Node
}

// Target names a Broker or Channel, or a source.
type Target struct {
	// Kind is "Broker", "Channel", or the kind of a source, such as
	// PingSource or ApiServerSource.
	Kind      string
	Namespace string
	Name      string
	// Pos is where the case names it.
	Pos diag.Pos
}

func (t Target) String() string {
	if t.IsSource() && t.Kind != KindPingSource {
		return "source " + t.sourceKey()
	}
	return strings.ToLower(t.Kind) + " " + t.key()
}

// IsSource reports whether the case starts at an event source, whose
// event enters at the source's sink.
func (t Target) IsSource() bool { return t.Kind != "" && t.Kind != "Broker" && t.Kind != "Channel" }

// key is how the routing table keys a Broker, Channel or PingSource
// (routing.Source.Key).
func (t Target) key() string { return t.Namespace + "/" + t.Name }

// sourceKey is how the routing table keys another source
// (routing.EventSource.Key): KIND/NAMESPACE/NAME.
func (t Target) sourceKey() string { return t.Kind + "/" + t.key() }

// fileShape is what a test file may hold; load.Decode reports every field
// that does not fit, at its position.
type fileShape struct {
	Cases []caseShape `json:"cases"`
}

type caseShape struct {
	Name         string         `json:"name"`
	Broker       string         `json:"broker,omitempty"`
	Channel      string         `json:"channel,omitempty"`
	PingSource   string         `json:"pingSource,omitempty"`
	Source       string         `json:"source,omitempty"`
	Event        map[string]any `json:"event,omitempty" knc:"open"`
	Expect       any            `json:"expect,omitempty" knc:"open"`
	Replies      map[string]any `json:"replies,omitempty" knc:"open"`
	Destinations any            `json:"destinations,omitempty" knc:"open"`
}

// Parse reads a test file. Problems are diagnostics at FILE:LINE:COL; a
// file with any is not returned. With update, a case may leave out what it
// expects: Update writes it.
func Parse(path string, src []byte, update bool) (*File, diag.List) {
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(src))
	if err := dec.Decode(&root); err != nil {
		return nil, diag.List{{Pos: diag.Pos{File: path, Line: yamlErrorLine(err), Column: 1}, Message: "not a YAML test file: " + err.Error()}}
	}
	if len(root.Content) == 0 || root.Content[0].Kind != yaml.MappingNode {
		return nil, diag.List{{Pos: diag.Pos{File: path, Line: 1, Column: 1}, Message: "a test file is a map with a list of cases: cases: [{name: ..., broker: NAMESPACE/NAME, event: {...}, expect: [...]}]"}}
	}
	doc := load.NewDocument(path, root.Content[0])
	var shape fileShape
	diags := load.Decode(doc, &shape)
	if len(diags) > 0 {
		return nil, diags
	}
	f := &File{Path: path, root: &root, src: src}
	seen := map[string]diag.Pos{}
	for i, cs := range shape.Cases {
		at := load.JoinIndex("cases", i)
		c := &Case{Name: cs.Name, Pos: doc.PosOf(at), node: doc.Lookup(at)}
		if c.Name == "" {
			diags.Add(doc.PosOf(load.JoinKey(at, "name")), load.JoinKey(at, "name"), "a case needs a name, which failures print")
		} else if p, ok := seen[c.Name]; ok {
			diags.Add(doc.PosOf(load.JoinKey(at, "name")), load.JoinKey(at, "name"), "case %q is also defined at line %d; give each case its own name", c.Name, p.Line)
		} else {
			seen[c.Name] = c.Pos
		}
		c.Target = parseTarget(doc, at, cs, &diags)
		switch {
		case c.Target.Kind == KindPingSource:
			if cs.Event != nil {
				p := load.JoinKey(at, "event")
				diags.Add(doc.PosOf(p), p, "a case that starts at a PingSource sends the event the PingSource sends; leave event out")
			}
		case c.Target.IsSource() && cs.Event == nil:
			// Only a PingSource's events are known from its spec: an
			// ApiServerSource's depend on the cluster, a ContainerSource's
			// or a SinkBinding subject's on a program.
			diags.Add(doc.PosOf(at), at, "a case that starts at %s %s needs the event it sends, which knc cannot make up: event: {type: ..., source: ...}", article(c.Target.Kind), c.Target.Kind)
		case c.Target.Kind == "" && cs.Event == nil:
			// Where the case starts is wrong already: whether it needs an
			// event depends on what was meant.
		default:
			c.Event = parseEvent(doc, load.JoinKey(at, "event"), cs.Event, i, &diags)
		}
		if cs.Expect != nil || !update {
			c.Expect = parseNames(doc, load.JoinKey(at, "expect"), cs.Expect, &diags)
		}
		if cs.Replies != nil {
			c.Replies = map[string]*event.Event{}
			for _, name := range slices.Sorted(maps.Keys(cs.Replies)) {
				p := load.JoinKey(load.JoinKey(at, "replies"), name)
				m, ok := cs.Replies[name].(map[string]any)
				if !ok {
					diags.Add(doc.PosOf(p), p, "a reply is the event the subscriber answers with, a map of CloudEvent attributes")
					continue
				}
				c.Replies[name] = parseEvent(doc, p, m, i, &diags)
			}
		}
		if cs.Destinations != nil {
			c.HasDestinations = true
			c.Destinations = parseNames(doc, load.JoinKey(at, "destinations"), cs.Destinations, &diags)
		}
		f.Cases = append(f.Cases, c)
	}
	if len(diags) > 0 {
		return nil, diags
	}
	return f, nil
}

// KindPingSource is the Kind of a Target that is a PingSource: the case
// starts with the event it sends, into its sink.
const KindPingSource = "PingSource"

func parseTarget(doc *load.Document, at string, cs caseShape, diags *diag.List) Target {
	var kind, ref, field string
	n := 0
	for _, t := range []struct{ kind, ref, field string }{
		{"Broker", cs.Broker, "broker"}, {"Channel", cs.Channel, "channel"}, {KindPingSource, cs.PingSource, "pingSource"}, {"", cs.Source, "source"},
	} {
		if t.ref == "" {
			continue
		}
		n++
		if n > 1 {
			diags.Add(doc.PosOf(load.JoinKey(at, t.field)), load.JoinKey(at, t.field), "a case starts at one of broker, channel, pingSource or source, not at %s and %s", field, t.field)
			return Target{}
		}
		kind, ref, field = t.kind, t.ref, t.field
	}
	if n == 0 {
		diags.Add(doc.PosOf(at), at, "a case needs broker: NAMESPACE/NAME or channel: NAMESPACE/NAME, where the event is sent, or pingSource: NAMESPACE/NAME or source: KIND/NAMESPACE/NAME, whose event it is")
		return Target{}
	}
	p := load.JoinKey(at, field)
	want := "NAMESPACE/NAME"
	if kind == "" {
		// source: KIND/NAMESPACE/NAME, as a destination of a test file
		// names a reference.
		want = "KIND/NAMESPACE/NAME, such as ApiServerSource/shop/pod-changes"
		var rest string
		var ok bool
		if kind, rest, ok = strings.Cut(ref, "/"); ok && kind != "" && !strings.Contains(kind, ".") {
			ref = rest
		} else {
			diags.Add(doc.PosOf(p), p, "%q: want %s", cs.Source, want)
			return Target{}
		}
		if kind == "Broker" || kind == "Channel" {
			diags.Add(doc.PosOf(p), p, "%q: a %s is no source; write %s: %s", cs.Source, kind, strings.ToLower(kind), ref)
			return Target{}
		}
	}
	ns, name, ok := strings.Cut(ref, "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		if field == "source" {
			ref = cs.Source
		}
		diags.Add(doc.PosOf(p), p, "%q: want %s", ref, want)
		return Target{}
	}
	return Target{Kind: kind, Namespace: ns, Name: name, Pos: doc.PosOf(p)}
}

// article is "a" or "an" before a kind's name.
func article(kind string) string {
	if kind != "" && strings.ContainsRune("AEIOU", rune(kind[0])) {
		return "an"
	}
	return "a"
}

// parseEvent reads a CloudEvent written as in structured mode: attributes
// and extensions side by side, data optional. specversion defaults to 1.0
// and id to one naming the case, so that a case states only what filters
// look at.
func parseEvent(doc *load.Document, path string, m map[string]any, index int, diags *diag.List) *event.Event {
	if m == nil {
		diags.Add(doc.PosOf(path), path, "a case needs an event: a map of CloudEvent attributes such as type and source")
		return nil
	}
	m = maps.Clone(m)
	if _, ok := m["specversion"]; !ok {
		m["specversion"] = event.CloudEventsVersionV1
	}
	if _, ok := m["id"]; !ok {
		m["id"] = fmt.Sprintf("knc-test-%d", index+1)
	}
	b, err := json.Marshal(m)
	if err != nil {
		diags.Add(doc.PosOf(path), path, "the event cannot be encoded as JSON: %v", err)
		return nil
	}
	e := event.New()
	if err := json.Unmarshal(b, &e); err != nil {
		diags.Add(doc.PosOf(path), path, "not a CloudEvent: %s", oneLine(err))
		return nil
	}
	if err := e.Validate(); err != nil {
		diags.Add(doc.PosOf(path), path, "invalid CloudEvent: %s", oneLine(err))
		return nil
	}
	return &e
}

// parseNames reads a list of names, or the word none.
func parseNames(doc *load.Document, path string, v any, diags *diag.List) []string {
	switch v := v.(type) {
	case nil:
		diags.Add(doc.PosOf(path), path, "say what the event must reach: a list of names, or %s", None)
	case string:
		if v == None {
			return nil
		}
		diags.Add(doc.PosOf(path), path, "%q: want a list of names, such as [%s], or %s", v, v, None)
	case []any:
		var names []string
		for i, x := range v {
			s, ok := x.(string)
			if !ok || s == "" {
				p := load.JoinIndex(path, i)
				diags.Add(doc.PosOf(p), p, "want the name of a Trigger or Subscription, as a string")
				continue
			}
			if slices.Contains(names, s) {
				p := load.JoinIndex(path, i)
				diags.Add(doc.PosOf(p), p, "%q is listed twice", s)
				continue
			}
			names = append(names, s)
		}
		slices.Sort(names)
		return names
	default:
		diags.Add(doc.PosOf(path), path, "want a list of names, or %s", None)
	}
	return nil
}

func yamlErrorLine(err error) int {
	var line int
	if _, scanErr := fmt.Sscanf(err.Error(), "yaml: line %d:", &line); scanErr == nil {
		return line
	}
	return 0
}

// oneLine joins the lines of the CloudEvents SDK's multi-line errors.
func oneLine(err error) string {
	var parts []string
	for _, l := range strings.Split(err.Error(), "\n") {
		if l = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(l), ";")); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}
