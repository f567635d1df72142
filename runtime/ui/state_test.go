package ui

import (
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/runtime/status"
)

// TestStateMasksReadyMessages: the Ready condition the page shows has the
// password and query values of its URIs masked, as /status has them.
func TestStateMasksReadyMessages(t *testing.T) {
	const secret = "hunter2"
	table := &routing.Table{Brokers: []routing.Broker{{Source: routing.Source{Namespace: "ns", Name: "b"}, Path: routing.BrokerPath("ns", "b")}}}
	h := New(Inputs{
		Table: func() *routing.Table { return table },
		Statuses: func() []status.Report {
			return []status.Report{{Kind: "Broker", Metadata: status.Metadata{Namespace: "ns", Name: "b"},
				Status: status.Status{Conditions: []status.Condition{{Type: status.ConditionReady, Status: status.False,
					Message: "dead-letter sink https://user:" + secret + "@sink.example/?token=" + secret + " does not answer"}}}}}
		},
	})
	st, err := h.state(topology.Selection{})
	if err != nil {
		t.Fatal(err)
	}
	n := st.Nodes[nodeID(topology.KindBroker, "ns", "b")]
	if n == nil || n.Ready == nil {
		t.Fatalf("the Broker's state has no Ready condition: %+v", st.Nodes)
	}
	if strings.Contains(n.Ready.Message, secret) {
		t.Errorf("the Ready message shows a secret: %q", n.Ready.Message)
	}
	if !strings.Contains(n.Ready.Message, "sink.example") {
		t.Errorf("the Ready message lost its URI: %q", n.Ready.Message)
	}
}
