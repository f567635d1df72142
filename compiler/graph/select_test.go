package graph_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/topology"
)

// nodeIDs lists a graph's nodes in drawing order.
func nodeIDs(g *topology.Graph) []string {
	var ids []string
	for _, ns := range g.Namespaces {
		for _, s := range ns.Sources {
			ids = append(ids, s.ID)
			for _, r := range s.Routes {
				ids = append(ids, r.ID)
			}
		}
		for _, s := range ns.Sinks {
			ids = append(ids, s.ID)
		}
	}
	for _, s := range g.Outside {
		ids = append(ids, s.ID)
	}
	return ids
}

func TestSelect(t *testing.T) {
	// Three namespaces: orders' Broker delivers to payments' Broker, whose
	// Trigger delivers to shipping's Channel.
	g := load(t, "../../examples/multi-namespace")
	tests := []struct {
		name string
		sel  topology.Selection
		want []string
	}{
		{"nothing selected", topology.Selection{}, nodeIDs(g)},
		{"a namespace, with what its routes deliver to elsewhere", topology.Selection{Namespaces: []string{"payments"}}, []string{
			"Broker/payments/default", "Trigger/payments/announce-settled", "Trigger/payments/settle",
			"Service/payments/payment-failures", "Service/payments/settlement",
			"Channel/shipping/dispatch",
		}},
		{"a Broker name in every namespace", topology.Selection{Brokers: []string{"default"}}, []string{
			"Broker/orders/default", "Trigger/orders/history", "Trigger/orders/payment-requests", "Service/orders/order-history",
			"Broker/payments/default", "Trigger/payments/announce-settled", "Trigger/payments/settle",
			"Service/payments/payment-failures", "Service/payments/settlement",
			"Channel/shipping/dispatch",
		}},
		{"a Broker by namespace and name", topology.Selection{Brokers: []string{"orders/default"}}, []string{
			"Broker/orders/default", "Trigger/orders/history", "Trigger/orders/payment-requests", "Service/orders/order-history",
			"Broker/payments/default",
		}},
		{"a Trigger's neighbours: its Broker and its subscriber", topology.Selection{Focus: "Trigger/orders/history", Depth: 1}, []string{
			"Broker/orders/default", "Trigger/orders/history", "Service/orders/order-history",
		}},
		{"depth 0 keeps the Broker a Trigger belongs to", topology.Selection{Focus: "trigger/orders/history"}, []string{
			"Broker/orders/default", "Trigger/orders/history",
		}},
		{"a Service two steps out", topology.Selection{Focus: "Service/shipping/warehouse", Depth: 2}, []string{
			"Channel/shipping/dispatch", "Subscription/shipping/warehouse", "Service/shipping/warehouse",
		}},
		{"a Broker three steps out reaches across namespaces", topology.Selection{Focus: "Broker/payments/default", Depth: 3}, []string{
			"Broker/orders/default", "Trigger/orders/history", "Trigger/orders/payment-requests",
			"Broker/payments/default", "Trigger/payments/announce-settled", "Trigger/payments/settle",
			"Service/payments/payment-failures", "Service/payments/settlement",
			"Channel/shipping/dispatch", "Subscription/shipping/carrier", "Subscription/shipping/warehouse",
		}},
		{"a URI", topology.Selection{Focus: "uri:https://carrier.example.com/webhooks/dispatch", Depth: 1}, []string{
			"Channel/shipping/dispatch", "Subscription/shipping/carrier", "uri:https://carrier.example.com/webhooks/dispatch",
		}},
		{"a focus within a namespace", topology.Selection{Namespaces: []string{"orders"}, Focus: "Broker/orders/default", Depth: 5}, []string{
			"Broker/orders/default", "Trigger/orders/history", "Trigger/orders/payment-requests", "Service/orders/order-history",
			"Broker/payments/default",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := g.Select(tt.sel)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, nodeIDs(got)); diff != "" {
				t.Errorf("nodes (-want +got):\n%s", diff)
			}
			checkSVG(t, got)
		})
	}
}

func TestSelectEdgesBetweenKeptNodes(t *testing.T) {
	g := load(t, "../../examples/multi-namespace")
	// The payments Broker is kept as the destination of orders' Trigger;
	// its dead-letter sink is not, nor is the edge to it.
	got, err := g.Select(topology.Selection{Brokers: []string{"orders/default"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"namespace orders",
		`  Broker/orders/default class="knc" served=true external=false`,
		"    Trigger/orders/history",
		"      subscriber -> Service/orders/order-history uri http://order-history.orders.svc.cluster.local/",
		"    Trigger/orders/payment-requests filter type = 'com.example.payment.requested'",
		"      subscriber -> Broker/payments/default uri http://knc-ingress.payments.svc.cluster.local/brokers/payments/default",
		"  sink Service/orders/order-history",
		"namespace payments",
		`  Broker/payments/default class="knc" served=true external=false`,
	}
	if diff := cmp.Diff(want, outline(got)); diff != "" {
		t.Errorf("selection (-want +got):\n%s", diff)
	}
	if !cmp.Equal(nodeIDs(load(t, "../../examples/multi-namespace")), nodeIDs(g)) {
		t.Error("Select changed the graph it selects from")
	}
}

func TestSelectErrors(t *testing.T) {
	g := load(t, "../../examples/multi-namespace")
	tests := []struct {
		name string
		sel  topology.Selection
		want topology.SelectionError
	}{
		{"misspelt namespace", topology.Selection{Namespaces: []string{"shiping"}},
			topology.SelectionError{Part: "namespace", Value: "shiping", Reason: `no Broker or Channel is in that namespace; did you mean "shipping"?`}},
		{"namespace of Services only", topology.Selection{Namespaces: []string{"elsewhere"}},
			topology.SelectionError{Part: "namespace", Value: "elsewhere", Reason: "no Broker or Channel is in that namespace"}},
		{"misspelt Broker", topology.Selection{Brokers: []string{"defalt"}},
			topology.SelectionError{Part: "broker", Value: "defalt", Reason: `no Broker has that name; did you mean "default"?`}},
		{"Broker in another namespace", topology.Selection{Namespaces: []string{"shipping"}, Brokers: []string{"orders/default"}},
			topology.SelectionError{Part: "broker", Value: "orders/default", Reason: "no Broker has that name"}},
		{"misspelt focus", topology.Selection{Focus: "Trigger/payments/setle"},
			topology.SelectionError{Part: "focus", Value: "Trigger/payments/setle", Reason: `no node of the graph has that name; did you mean "Trigger/payments/settle"?`}},
		{"focus by name alone", topology.Selection{Focus: "settle"},
			topology.SelectionError{Part: "focus", Value: "settle", Reason: "no node of the graph has that name; give KIND/NAMESPACE/NAME, such as Trigger/default/orders"}},
		{"focus outside the namespaces", topology.Selection{Namespaces: []string{"orders"}, Focus: "Service/shipping/warehouse"},
			topology.SelectionError{Part: "focus", Value: "Service/shipping/warehouse", Reason: "no node of the graph has that name"}},
		{"negative depth", topology.Selection{Focus: "Broker/orders/default", Depth: -1},
			topology.SelectionError{Part: "depth", Value: "-1", Reason: "give 0 or more steps"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := g.Select(tt.sel)
			got, ok := errors.AsType[*topology.SelectionError](err)
			if !ok {
				t.Fatalf("Select = %v, want a *SelectionError", err)
			}
			if diff := cmp.Diff(tt.want, *got); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}
