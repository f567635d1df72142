package ui

import (
	"bytes"
	"encoding/xml"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
	"github.com/knc-dev/knc/runtime/status"
)

// exampleTable compiles an example of the repository into its routing
// table and its graph as knc graph builds it from the project.
func exampleTable(t *testing.T, name string) (*routing.Table, *topology.Graph) {
	return compileExample(t, name, nil)
}

// compileExample is exampleTable with the references address resolves
// taken as resolved there, as knc run --services-url takes them.
func compileExample(t *testing.T, name string, address func(*model.KReference) (string, bool)) (*routing.Table, *topology.Graph) {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "..", "examples", name))
	if err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("%s is invalid:\n%v", name, res.Diagnostics)
	}
	if len(res.Units) != 1 {
		t.Fatalf("%s has %d units, want 1", name, len(res.Units))
	}
	u := res.Units[0]
	table, diags := routes.CompileWith(u.Set, res.Config, routes.Options{Address: address})
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	return table, graph.Build(u.Set, table)
}

// TestTopologyDrawsAsKncGraph checks that the page's graph, built from
// the routing table alone, is drawn as knc graph draws the project the
// table was compiled from, but for what the table does not hold: the
// class of a Channel, or of the Channels of a Sequence or Parallel. In
// examples/policies, Triggers name their Broker's dead-letter sink in
// deliveries of their own, which knc graph draws at each Trigger.
func TestTopologyDrawsAsKncGraph(t *testing.T) {
	for _, name := range []string{"quickstart", "multi-namespace", "policies", "sources"} {
		t.Run(name, func(t *testing.T) {
			table, want := exampleTable(t, name)
			for _, ns := range want.Namespaces {
				for _, s := range ns.Sources {
					switch s.Kind {
					case topology.KindChannel, knative.KindSequence, knative.KindParallel:
						s.Class = ""
					}
				}
			}
			var wantDOT, gotDOT bytes.Buffer
			if err := topology.WriteDOT(&wantDOT, want); err != nil {
				t.Fatal(err)
			}
			if err := topology.WriteDOT(&gotDOT, buildView(table, nil).graph); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(wantDOT.String(), gotDOT.String()); diff != "" {
				t.Errorf("DOT (-knc graph +page):\n%s", diff)
			}
		})
	}
}

// svgNode is a node box of a rendered SVG: its id, its <title> and its
// texts.
type svgNode struct {
	ID    string   `xml:"id,attr"`
	Class string   `xml:"class,attr"`
	Title string   `xml:"title"`
	Texts []string `xml:"text"`
	Inner []struct {
		Texts []string `xml:"text"`
		A     []struct {
			Texts []string `xml:"text"`
		} `xml:"a"`
	} `xml:"g"`
}

// svgNodes reads the node boxes of an SVG, wherever they are nested.
func svgNodes(t *testing.T, svg []byte) []svgNode {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	var nodes []svgNode
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "g" {
			continue
		}
		for _, a := range se.Attr {
			if a.Name.Local == "class" && strings.Fields(a.Value)[0] == "node" {
				var n svgNode
				if err := dec.DecodeElement(&n, &se); err != nil {
					t.Fatal(err)
				}
				nodes = append(nodes, n)
			}
		}
	}
	return nodes
}

// TestNodesFindTheirBoxes checks that every node the page lists names a
// box of the drawing, by ID or short name as the page's script looks it
// up, that shows the node's name.
func TestNodesFindTheirBoxes(t *testing.T) {
	table, _ := exampleTable(t, "quickstart")
	t.Run("table", func(t *testing.T) { checkBoxes(t, buildView(table, nil)) })
	// As knc run --services-url compiles it: every Service at one local
	// address, which the project's graph names.
	local, drawn := compileExample(t, "quickstart", func(r *model.KReference) (string, bool) {
		return "http://127.0.0.1:9090/", r.Kind == "Service"
	})
	top := buildView(local, drawn)
	if top.graph != drawn {
		t.Error("the project's graph is not the one drawn")
	}
	t.Run("project", func(t *testing.T) { checkBoxes(t, top) })
}

func checkBoxes(t *testing.T, top *view) {
	var svg bytes.Buffer
	if err := layout.WriteSVG(&svg, top.graph); err != nil {
		t.Fatal(err)
	}
	boxes := svgNodes(t, svg.Bytes())
	if len(boxes) == 0 {
		t.Fatalf("no node boxes in\n%s", svg.String())
	}
	if len(top.nodes) != 7 {
		t.Errorf("%d nodes, want the Broker, its 3 Triggers, the Channel and its 2 Subscriptions", len(top.nodes))
	}
	for _, n := range top.nodes {
		var found *svgNode
		for i, b := range boxes {
			if b.ID == n.ID || b.ID == n.Short || b.Title == n.Short {
				found = &boxes[i]
				break
			}
		}
		if found == nil {
			t.Errorf("no box for %s (%s)", n.ID, n.Short)
			continue
		}
		texts := append([]string(nil), found.Texts...)
		for _, g := range found.Inner {
			texts = append(texts, g.Texts...)
			for _, a := range g.A {
				texts = append(texts, a.Texts...)
			}
		}
		if !contains(texts, n.Name) {
			t.Errorf("the box of %s shows %q, not its name", n.ID, texts)
		}
	}
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

func TestTopologyOfTriggers(t *testing.T) {
	table, _ := exampleTable(t, "quickstart")
	got := map[string]Node{}
	for _, n := range buildView(table, nil).nodes {
		n.Short = ""
		got[n.ID] = n
	}
	want := map[string]Node{
		"Broker/quickstart/default": {ID: "Broker/quickstart/default", Kind: "Broker", Namespace: "quickstart", Name: "default", Path: "/brokers/quickstart/default"},
		"Trigger/quickstart/order-audit": {
			ID: "Trigger/quickstart/order-audit", Kind: "Trigger", Namespace: "quickstart", Name: "order-audit",
			Source: "Broker/quickstart/default", Filter: "type LIKE 'com.example.order.%'", Subscriber: "http://audit-log.quickstart.svc.cluster.local/",
		},
		"Subscription/quickstart/sms": {
			ID: "Subscription/quickstart/sms", Kind: "Subscription", Namespace: "quickstart", Name: "sms",
			Source: "Channel/quickstart/notifications", Subscriber: "http://sms-gateway.quickstart.svc.cluster.local/",
		},
	}
	for id, w := range want {
		if diff := cmp.Diff(w, got[id]); diff != "" {
			t.Errorf("%s (-want +got):\n%s", id, diff)
		}
	}
}

func TestEmptyTable(t *testing.T) {
	top := buildView(nil, nil)
	if len(top.nodes) != 0 {
		t.Errorf("nodes = %v, want none", top.nodes)
	}
	var svg bytes.Buffer
	if err := layout.WriteSVG(&svg, top.graph); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(svg.Bytes(), []byte("<svg")) {
		t.Errorf("no drawing of an empty table:\n%s", svg.String())
	}
}

// TestPingSourceOnThePage: a PingSource of the table is a node of the
// page, drawn feeding its sink as knc graph draws it.
func TestPingSourceOnThePage(t *testing.T) {
	table := &routing.Table{
		Brokers: []routing.Broker{{Source: routing.Source{Namespace: "ns", Name: "b"}, Path: routing.BrokerPath("ns", "b"), Address: "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b"}},
		PingSources: []routing.PingSource{{Source: routing.Source{Namespace: "ns", Name: "beat"}, Schedule: "* * * * *",
			Sink: routing.Destination{URI: "http://knc-ingress.ns.svc.cluster.local/brokers/ns/b"}, SinkPath: routing.BrokerPath("ns", "b")}},
	}
	top := buildView(table, nil)
	var ids []string
	for _, n := range top.nodes {
		ids = append(ids, n.ID)
	}
	if diff := cmp.Diff([]string{"Broker/ns/b", "PingSource.sources.knative.dev/ns/beat"}, ids); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	var sinks []string
	for _, ns := range top.graph.Namespaces {
		for _, s := range ns.Sources {
			for _, e := range s.Edges {
				sinks = append(sinks, s.ID+" -"+string(e.Role)+"-> "+e.To)
			}
		}
	}
	if diff := cmp.Diff([]string{"PingSource.sources.knative.dev/ns/beat -sink-> Broker/ns/b"}, sinks); diff != "" {
		t.Errorf("edges (-want +got):\n%s", diff)
	}

	// Its Ready condition, as the runtime reports it, is the node's.
	h := New(Inputs{
		Table: func() *routing.Table { return table },
		Statuses: func() []status.Report {
			return []status.Report{{APIVersion: "sources.knative.dev/v1", Kind: "PingSource", Metadata: status.Metadata{Namespace: "ns", Name: "beat"},
				Status: status.Status{Conditions: []status.Condition{{Type: status.ConditionReady, Status: status.False, Reason: "NotFound"}}}}}
		},
	})
	st, err := h.state(topology.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	n := st.Nodes["PingSource.sources.knative.dev/ns/beat"]
	if n == nil || n.Ready == nil || n.Ready.Reason != "NotFound" {
		t.Errorf("the PingSource's state is %+v, want its Ready condition, reason NotFound", n)
	}
}
