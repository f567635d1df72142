package ui

import (
	"net/http"
	"net/http/httptest"
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

// TestAPIMasksURISecrets reads /ui/api/topology and /ui/api/state for a
// Trigger whose subscriber URI, and a Ready message naming it, carry a
// user name alone, a path parameter and a fragment that are credentials:
// neither shows them, as neither showed a password. They were shown
// whole before.
func TestAPIMasksURISecrets(t *testing.T) {
	secrets := []string{"T0KEN-u5er", "p4th-s3cret", "fr4g-s3cret"}
	uri := "https://T0KEN-u5er@hooks.example/in;sig=p4th-s3cret#fr4g-s3cret"
	table := &routing.Table{Brokers: []routing.Broker{{
		Source: routing.Source{Namespace: "ns", Name: "b"}, Path: routing.BrokerPath("ns", "b"),
		Triggers: []routing.Trigger{{Source: routing.Source{Namespace: "ns", Name: "t"}, Subscriber: routing.Destination{URI: uri}}},
	}}}
	h := New(Inputs{
		Table: func() *routing.Table { return table },
		Statuses: func() []status.Report {
			return []status.Report{{Kind: "Trigger", Metadata: status.Metadata{Namespace: "ns", Name: "t"},
				Status: status.Status{Conditions: []status.Condition{{Type: status.ConditionReady, Status: status.False,
					Message: "subscriber " + uri + " does not answer"}}}}}
		},
	})
	for _, path := range []string{"/ui/api/topology", "/ui/api/state"} {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		body := rec.Body.String()
		if rec.Code != http.StatusOK || !strings.Contains(body, "hooks.example") {
			t.Fatalf("GET %s = %d, without the subscriber's host:\n%s", path, rec.Code, body)
		}
		for _, s := range secrets {
			if strings.Contains(body, s) {
				t.Errorf("GET %s shows %q:\n%s", path, s, body)
			}
		}
	}
}
