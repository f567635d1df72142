package topology_test

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// ids lists a graph's nodes by namespace, in the order they are drawn.
func ids(g *topology.Graph) map[string][]string {
	m := map[string][]string{}
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			m[ns.Name] = append(m[ns.Name], s.ID)
			for _, r := range s.Routes {
				m[ns.Name] = append(m[ns.Name], r.ID)
			}
		}
		for _, s := range ns.Sinks {
			m[ns.Name] = append(m[ns.Name], s.ID)
		}
	}
	for _, s := range g.Outside {
		m["outside"] = append(m["outside"], s.ID)
	}
	return m
}

func TestAssemble(t *testing.T) {
	orders := &topology.Source{ID: "Broker/shop/orders", Kind: topology.KindBroker, Namespace: "shop", Name: "orders", Routes: []*topology.Route{
		{ID: "Trigger/shop/b", Kind: topology.KindTrigger, Namespace: "shop", Name: "b", Edges: []*topology.Edge{{Role: topology.Subscriber, To: "Service/shop/billing"}}},
		{ID: "Trigger/shop/a", Kind: topology.KindTrigger, Namespace: "shop", Name: "a", Edges: []*topology.Edge{{Role: topology.Subscriber, To: "uri:https://example.com/hook"}}},
	}}
	audit := &topology.Source{ID: "Channel/ops/audit", Kind: topology.KindChannel, Namespace: "ops", Name: "audit", Routes: []*topology.Route{
		{ID: "Subscription/ops/s", Kind: topology.KindSubscription, Namespace: "ops", Name: "s", Edges: []*topology.Edge{{Role: topology.Reply, To: "Broker/shop/orders"}}},
	}, Edges: []*topology.Edge{{Role: topology.DeadLetter, To: "Service/ops/dead-letters"}}}
	sinks := map[string]*topology.Sink{
		"uri:https://example.com/hook": {ID: "uri:https://example.com/hook", Kind: topology.KindURI, URI: "https://example.com/hook"},
		// A sink that is a source of the graph is drawn as the source.
		"Broker/shop/orders": {ID: "Broker/shop/orders", Kind: topology.KindBroker, Namespace: "shop", Name: "orders"},
	}
	g := topology.Assemble(map[string]*topology.Source{orders.ID: orders, audit.ID: audit}, sinks)
	want := map[string][]string{
		"ops":     {"Channel/ops/audit", "Subscription/ops/s", "Service/ops/dead-letters"},
		"shop":    {"Broker/shop/orders", "Trigger/shop/a", "Trigger/shop/b", "Service/shop/billing"},
		"outside": {"uri:https://example.com/hook"},
	}
	if diff := cmp.Diff(want, ids(g)); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if g.Namespaces[0].Name != "ops" {
		t.Errorf("first namespace %q, want ops: namespaces are sorted by name", g.Namespaces[0].Name)
	}
	if len(sinks) != 2 {
		t.Errorf("Assemble added to the caller's sinks: %v", sinks)
	}
}

// TestShortNames checks that the short names are those of the DOT the
// drawings are made from.
func TestShortNames(t *testing.T) {
	orders := &topology.Source{ID: "Broker/shop/orders", Kind: topology.KindBroker, Namespace: "shop", Name: "orders", Routes: []*topology.Route{
		{ID: "Trigger/shop/a", Kind: topology.KindTrigger, Namespace: "shop", Name: "a", Edges: []*topology.Edge{{Role: topology.Subscriber, To: "Service/shop/billing"}}},
	}}
	audit := &topology.Source{ID: "Channel/ops/audit", Kind: topology.KindChannel, Namespace: "ops", Name: "audit"}
	g := topology.Assemble(map[string]*topology.Source{orders.ID: orders, audit.ID: audit}, nil)
	var dot bytes.Buffer
	if err := topology.WriteDOT(&dot, g); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{}
	for _, m := range dotNode.FindAllStringSubmatch(dot.String(), -1) {
		want[m[2]] = m[1]
	}
	if diff := cmp.Diff(want, topology.ShortNames(g)); diff != "" {
		t.Errorf("short names (-DOT +ShortNames):\n%s", diff)
	}
	if len(want) != 4 {
		t.Errorf("the DOT names %d nodes, want the Broker, its Trigger, the Service and the Channel:\n%s", len(want), dot.String())
	}
}

// dotNode finds a node's short name and ID in DOT.
var dotNode = regexp.MustCompile(`(?m)^\s+(n\d+) \[id="([^"]+)"`)

// TestDescribeFilter checks the filters of the routing table's form; the
// dialects are covered from the manifests' form in compiler/graph.
func TestDescribeFilter(t *testing.T) {
	tests := []struct {
		name       string
		attributes map[string]string
		filters    []routing.Filter
		want       string
	}{
		{"none", nil, nil, ""},
		{"attributes", map[string]string{"type": "a", "source": ""}, nil, "EXISTS source AND type = 'a'"},
		{"filters win over attributes", map[string]string{"type": "a"}, []routing.Filter{{Exact: map[string]string{"type": "b"}}}, "type = 'b'"},
		{"an entry of no dialect passes", nil, []routing.Filter{{}}, "TRUE"},
		{"not of cesql", nil, []routing.Filter{{Not: &routing.Filter{CESQL: "a = 'x' OR b = 'y'"}}}, "NOT (a = 'x' OR b = 'y')"},
		{"all of any", nil, []routing.Filter{{All: []routing.Filter{
			{Any: []routing.Filter{{Exact: map[string]string{"a": "1"}}, {Suffix: map[string]string{"b": "2"}}}},
			{Prefix: map[string]string{"c": "3"}},
		}}}, "(a = '1' OR b LIKE '%2') AND c LIKE '3%'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := topology.DescribeFilter(tt.attributes, tt.filters); got != tt.want {
				t.Errorf("DescribeFilter = %q, want %q", got, tt.want)
			}
		})
	}
}
