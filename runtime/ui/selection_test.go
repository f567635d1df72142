package ui_test

import (
	"encoding/json"
	"html"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/topology"
)

// TestSelectionNarrowsThePage asks the page's drawing, topology and state
// for parts of examples/multi-namespace with knc graph's filters as query
// parameters: each answers with the nodes of that part alone, and a
// filter that names nothing is refused, saying why.
func TestSelectionNarrowsThePage(t *testing.T) {
	ok, _, _ := subscribers(t)
	table, drawn := localExample(t, "multi-namespace", ok)
	s := serve(t, table, setup{graph: drawn})

	var (
		orders   = []string{"Broker/orders/default", "Trigger/orders/history", "Trigger/orders/payment-requests"}
		payments = []string{"Broker/payments/default", "Trigger/payments/announce-settled", "Trigger/payments/settle"}
		shipping = []string{"Channel/shipping/dispatch", "Subscription/shipping/carrier", "Subscription/shipping/warehouse"}
	)
	tests := []struct {
		name, query string
		want        []string
	}{
		{"everything", "", slices.Concat(orders, payments, shipping)},
		{"the empty fields of the form", "?namespace=&broker=&focus=&depth=1", slices.Concat(orders, payments, shipping)},
		// As knc graph draws them, with whatever their routes deliver to:
		// a Trigger of payments delivers to the Channel of shipping, one
		// of orders to the Broker of payments.
		{"one namespace", "?namespace=payments", append(slices.Clone(payments), "Channel/shipping/dispatch")},
		{"namespaces comma-separated", "?namespace=payments,shipping", slices.Concat(payments, shipping)},
		{"namespaces repeated", "?namespace=payments&namespace=shipping", slices.Concat(payments, shipping)},
		{"a Broker by NAMESPACE/NAME", "?broker=orders/default", append(slices.Clone(orders), "Broker/payments/default")},
		// The Channel, its Subscriptions one step away, and the Trigger
		// that delivers to it, drawn with its Broker.
		{"a focus", "?focus=Channel/shipping/dispatch&depth=1", []string{"Broker/payments/default", "Trigger/payments/announce-settled", "Channel/shipping/dispatch", "Subscription/shipping/carrier", "Subscription/shipping/warehouse"}},
		{"a focus of depth 0", "?focus=Trigger/orders/history&depth=0", []string{"Broker/orders/default", "Trigger/orders/history"}},
		{"a focus, the kind in any case", "?focus=trigger/orders/history&depth=0", []string{"Broker/orders/default", "Trigger/orders/history"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, b := get(t, s.url+"/ui/api/topology"+tc.query)
			if code != http.StatusOK {
				t.Fatalf("GET /ui/api/topology%s: %d %s", tc.query, code, b)
			}
			var top struct{ Nodes []struct{ ID, Short string } }
			if err := json.Unmarshal(b, &top); err != nil {
				t.Fatal(err)
			}
			var listed []string
			shorts := map[string]bool{}
			for _, n := range top.Nodes {
				listed = append(listed, n.ID)
				shorts[n.Short] = true
			}
			if diff := cmp.Diff(tc.want, listed); diff != "" {
				t.Errorf("topology (-want +got):\n%s", diff)
			}
			if len(shorts) != len(listed) || shorts[""] {
				t.Errorf("short names %v: want one of its own for each node", shorts)
			}

			code, b = get(t, s.url+"/ui/api/state"+tc.query)
			if code != http.StatusOK {
				t.Fatalf("GET /ui/api/state%s: %d %s", tc.query, code, b)
			}
			var st struct{ Nodes map[string]any }
			if err := json.Unmarshal(b, &st); err != nil {
				t.Fatal(err)
			}
			var stated []string
			for id := range st.Nodes {
				stated = append(stated, id)
			}
			if diff := cmp.Diff(tc.want, stated, cmpSorted); diff != "" {
				t.Errorf("state (-want +got):\n%s", diff)
			}

			code, svg := get(t, s.url+"/ui/graph.svg"+tc.query)
			if code != http.StatusOK {
				t.Fatalf("GET /ui/graph.svg%s: %d %s", tc.query, code, svg)
			}
			var drawnIDs []string
			for _, m := range svgNodeID.FindAllSubmatch(svg, -1) {
				if id := html.UnescapeString(string(m[1])); strings.HasPrefix(id, "Broker/") || strings.HasPrefix(id, "Channel/") || strings.HasPrefix(id, "Trigger/") || strings.HasPrefix(id, "Subscription/") {
					drawnIDs = append(drawnIDs, id)
				}
			}
			if diff := cmp.Diff(tc.want, drawnIDs, cmpSorted); diff != "" {
				t.Errorf("Brokers, Channels and routes drawn (-want +got):\n%s", diff)
			}

			// The same part before its layout, which the page lays out
			// when the runtime does not.
			code, dot := get(t, s.url+"/ui/graph.dot"+tc.query)
			if code != http.StatusOK {
				t.Fatalf("GET /ui/graph.dot%s: %d %s", tc.query, code, dot)
			}
			var dotIDs []string
			for _, m := range dotNodeID.FindAllSubmatch(dot, -1) {
				if id := string(m[1]); strings.HasPrefix(id, "Broker/") || strings.HasPrefix(id, "Channel/") || strings.HasPrefix(id, "Trigger/") || strings.HasPrefix(id, "Subscription/") {
					dotIDs = append(dotIDs, id)
				}
			}
			if diff := cmp.Diff(tc.want, dotIDs, cmpSorted); diff != "" {
				t.Errorf("Brokers, Channels and routes in the DOT (-want +got):\n%s", diff)
			}
		})
	}

	refused := []struct {
		name, query, want string
	}{
		{"a namespace misspelt", "?namespace=paymnts", `namespace "paymnts": no Broker or Channel is in that namespace; did you mean "payments"?`},
		{"a Broker of no namespace", "?broker=nowhere/default", `broker "nowhere/default": no Broker has that name`},
		{"a focus that names nothing", "?focus=Trigger/orders/histry", `focus "Trigger/orders/histry": no node of the graph has that name; did you mean "Trigger/orders/history"?`},
		{"a depth that is not a number", "?focus=Trigger/orders/history&depth=two", `depth "two": give a whole number of steps, 0 or more`},
		{"a negative depth", "?focus=Trigger/orders/history&depth=-1", `depth "-1": give 0 or more steps`},
	}
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/ui/api/topology", "/ui/graph.svg", "/ui/graph.dot", "/ui/api/state", "/ui/events"} {
				code, b := get(t, s.url+path+tc.query)
				if got := strings.TrimSpace(string(b)); code != http.StatusBadRequest || got != tc.want {
					t.Errorf("GET %s%s: %d %q, want 400 %q", path, tc.query, code, got, tc.want)
				}
			}
		})
	}
}

// dotNodeID finds the ID of each node of the DOT topology.WriteDOT writes.
var dotNodeID = regexp.MustCompile(`\[id="([^"]+)"`)

// TestDOTOfATopologyTooLargeToLayOut: the DOT the page would lay out in
// the browser is refused, as the layout on the server is, past the
// layout's limits, saying to pick a part, which is then served.
func TestDOTOfATopologyTooLargeToLayOut(t *testing.T) {
	ok, _, _ := subscribers(t)
	s := serve(t, manyTriggers(topology.MaxLayoutNodes, ok), setup{noDrawing: true})
	code, b := get(t, s.url+"/ui/graph.dot")
	if msg := string(b); code != http.StatusInternalServerError || !strings.Contains(msg, "too large to lay out") || !strings.Contains(msg, "pick a part") {
		t.Errorf("GET /ui/graph.dot of %d Triggers: %d %s, want 500 saying it is too large and to pick a part", topology.MaxLayoutNodes, code, b)
	}
	code, b = get(t, s.url+"/ui/graph.dot?focus=Trigger/mesh/t007&depth=1")
	if code != http.StatusOK || !strings.Contains(string(b), `id="Trigger/mesh/t007"`) {
		t.Errorf("GET /ui/graph.dot of one Trigger's neighbourhood: %d %s", code, b)
	}
}

// svgNodeID finds the ID of each node box Graphviz writes.
var svgNodeID = regexp.MustCompile(`<g id="([^"]+)" class="node">`)

var cmpSorted = cmp.Transformer("sorted", func(in []string) []string {
	out := slices.Clone(in)
	slices.Sort(out)
	return out
})
