package diff_test

import (
	"bytes"
	"encoding/json"
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/diff"
)

// changedProject is baseProject with a Trigger moved to another Broker
// (an immutable-field error), a Trigger added, a filter and a delivery
// option changed.
func changedProject() map[string]string {
	files := maps.Clone(baseProject)
	files["eventing/triggers.yaml"] = strings.Replace(strings.Replace(files["eventing/triggers.yaml"], "broker: audit", "broker: default", 1), "type: order.created", "type: order.paid", 1)
	files["eventing/brokers.yaml"] = strings.Replace(files["eventing/brokers.yaml"], "retry: 3", "retry: 4", 1)
	files["eventing/late.yaml"] = `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: late
spec:
  broker: audit
  subscriber: {uri: "https://hooks.example.com/late/<y>"}
`
	return files
}

func changedReport(t *testing.T) *diff.Report {
	t.Helper()
	return compareWithBase(t, changedProject())
}

func TestMarkdown(t *testing.T) {
	rep := changedReport(t)
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, diff.MarkdownOptions{Graph: true}); err != nil {
		t.Fatal(err)
	}
	out := md.String()
	golden(t, "markdown/changed.md", out)

	if !strings.HasPrefix(out, diff.MarkdownMarker+"\n<!-- knc-diff:violations=1 -->\n") {
		t.Errorf("the comment does not start with its markers:\n%s", out)
	}
	order := []string{"| kind | added | removed | changed |", "> [!CAUTION]", "<details><summary>Objects", "```mermaid"}
	at := -1
	for _, s := range order {
		i := strings.Index(out, s)
		if i < at {
			t.Errorf("%q is missing or out of order (summary first, then errors, details, graph)", s)
		}
		at = i
	}
	if strings.Count(out, "<details") != strings.Count(out, "</details>") {
		t.Errorf("unbalanced <details> blocks")
	}

	var noGraph bytes.Buffer
	if err := rep.WriteMarkdown(&noGraph, diff.MarkdownOptions{}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(noGraph.String(), "mermaid") {
		t.Errorf("Graph: false still draws the graph")
	}
	var tooBig bytes.Buffer
	if err := rep.WriteMarkdown(&tooBig, diff.MarkdownOptions{Graph: true, MaxGraphNodes: 2}); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(tooBig.String(), "```mermaid") || !strings.Contains(tooBig.String(), "too many to draw") {
		t.Errorf("a graph over MaxGraphNodes is drawn, or not said to be left out")
	}
}

func TestMarkdownNoDifference(t *testing.T) {
	rep := compareWithBase(t, nil)
	var md bytes.Buffer
	if err := rep.WriteMarkdown(&md, diff.MarkdownOptions{Graph: true}); err != nil {
		t.Fatal(err)
	}
	want := diff.MarkdownMarker + "\n<!-- knc-diff:violations=0 -->\n### knc diff: `HEAD` → working tree\n\nNo differences in Brokers, Triggers, Channels, Subscriptions, other objects, routes or the runtime.\n"
	if d := cmp.Diff(want, md.String()); d != "" {
		t.Errorf("markdown (-want +got):\n%s", d)
	}
}

func TestJSON(t *testing.T) {
	rep := changedReport(t)
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "json/changed.json", string(b)+"\n")

	var decoded struct {
		Different  bool
		Summary    diff.Summary
		Objects    []diff.ObjectChange
		Routes     []diff.RouteChange
		Filters    []diff.FilterChange
		Deliveries []diff.DeliveryChange
		Violations []struct {
			Pos     struct{ File string }
			Path    string
			Message string
		}
	}
	if err := json.Unmarshal(b, &decoded); err != nil {
		t.Fatal(err)
	}
	if !decoded.Different || len(decoded.Violations) != 1 || decoded.Violations[0].Path != "spec.broker" || decoded.Violations[0].Pos.File != "eventing/triggers.yaml" {
		t.Errorf("JSON violations = %+v", decoded.Violations)
	}
	if decoded.Summary.RoutesGained != 2 || decoded.Summary.RoutesLost != 1 {
		t.Errorf("JSON summary = %+v, want 2 routes gained and 1 lost", decoded.Summary)
	}
	if len(decoded.Filters) != 1 || decoded.Filters[0].Effect != diff.FilterChanged {
		t.Errorf("JSON filters = %+v", decoded.Filters)
	}
}
