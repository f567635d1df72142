package graph_test

import (
	"bytes"
	"fmt"
	"image/png"
	"math"
	"os"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/graph"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/topology"
	"github.com/knc-dev/knc/internal/topology/layout"
)

// project writes manifests into a temporary directory and draws them.
func project(t testing.TB, files map[string]string) *topology.Graph {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, content := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(content)}
	}
	dir := t.TempDir()
	if err := os.CopyFS(dir, fsys); err != nil {
		t.Fatal(err)
	}
	return load(t, dir)
}

// outline writes a graph as lines that are easy to compare.
func outline(g *topology.Graph) []string {
	var lines []string
	edges := func(indent string, es []*topology.Edge) {
		for _, e := range es {
			line := fmt.Sprintf("%s%s -> %s", indent, e.Role, e.To)
			if e.Path != "" {
				line += " path " + e.Path
			}
			if e.URI != "" {
				line += " uri " + e.URI
			}
			if e.Status != topology.Unchanged {
				line += " [" + e.Status.String() + "]"
			}
			lines = append(lines, line)
		}
	}
	status := func(s topology.Status) string {
		if s == topology.Unchanged {
			return ""
		}
		return " [" + s.String() + "]"
	}
	for _, ns := range g.Namespaces {
		lines = append(lines, "namespace "+ns.Name)
		for _, s := range ns.Sources {
			line := fmt.Sprintf("  %s class=%q served=%v external=%v", s.ID, s.Class, s.Served, s.External)
			lines = append(lines, line+status(s.Status))
			edges("    ", s.Edges)
			for _, r := range s.Routes {
				line := "    " + r.ID
				if r.Filter != "" {
					line += " filter " + r.Filter
				}
				lines = append(lines, line+status(r.Status))
				edges("      ", r.Edges)
			}
		}
		for _, s := range ns.Sinks {
			lines = append(lines, "  sink "+s.ID+status(s.Status))
		}
	}
	for _, s := range g.Outside {
		lines = append(lines, "outside "+s.ID+status(s.Status))
	}
	return lines
}

const broker = `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
spec:
  delivery:
    deadLetterSink:
      ref: {apiVersion: v1, kind: Service, name: dlq}
---
apiVersion: v1
kind: Service
metadata: {name: dlq}
---
apiVersion: v1
kind: Service
metadata: {name: app}
`

func TestBuild(t *testing.T) {
	g := project(t, map[string]string{
		"broker.yaml": broker,
		"triggers.yaml": `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: orders}
spec:
  broker: default
  filter: {attributes: {type: order}}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: app}
    uri: /orders
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: all}
spec:
  broker: default
  subscriber: {uri: "http://example.com/all"}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: ch, namespace: other}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: s, namespace: other}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: ch}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: app, namespace: default}
  reply:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default, namespace: default}
`,
	})
	want := []string{
		"namespace default",
		`  Broker/default/default class="knc" served=true external=false`,
		"    dead letter -> Service/default/dlq uri http://dlq.default.svc.cluster.local/",
		"    Trigger/default/all",
		"      subscriber -> uri:http://example.com/all uri http://example.com/all",
		"    Trigger/default/orders filter type = 'order'",
		"      subscriber -> Service/default/app path /orders uri http://app.default.svc.cluster.local/orders",
		"  sink Service/default/app",
		"  sink Service/default/dlq",
		"namespace other",
		`  Channel/other/ch class="JetStreamChannel" served=true external=false`,
		"    Subscription/other/s",
		"      subscriber -> Service/default/app uri http://app.default.svc.cluster.local/",
		"      reply -> Broker/default/default uri http://knc-ingress.default.svc.cluster.local/brokers/default/default",
		"outside uri:http://example.com/all",
	}
	if diff := cmp.Diff(want, outline(g)); diff != "" {
		t.Errorf("graph (-want +got):\n%s", diff)
	}
}

// changedTriggers are the Triggers TestChanges draws at two revisions, with
// what changes between them left to fmt: the type Trigger refiltered
// filters on, the Service Trigger moved delivers to and the Broker Trigger
// gone belongs to.
const changedTriggers = `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: kept}
spec:
  broker: default
  subscriber: {ref: {apiVersion: v1, kind: Service, name: app}}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: refiltered}
spec:
  broker: default
  filter: {attributes: {type: %s}}
  subscriber: {ref: {apiVersion: v1, kind: Service, name: app}}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: moved}
spec:
  broker: default
  subscriber: {ref: {apiVersion: v1, kind: Service, name: %s}}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: gone}
spec:
  broker: %s
  subscriber: {uri: "http://example.com/gone"}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: quiet}
`

func TestChanges(t *testing.T) {
	base := project(t, map[string]string{
		"broker.yaml":   broker,
		"triggers.yaml": fmt.Sprintf(changedTriggers, "a", "app", "default"),
	})
	head := project(t, map[string]string{
		"broker.yaml":   broker,
		"triggers.yaml": fmt.Sprintf(changedTriggers, "b", "new-app", "second"),
		"added.yaml": `apiVersion: v1
kind: Service
metadata: {name: new-app}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: fresh}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: second}
`,
	})
	want := []string{
		"namespace default",
		// The Broker did not change; it is drawn for its Triggers.
		`  Broker/default/default class="knc" served=true external=false`,
		"    Trigger/default/gone [removed]",
		"      subscriber -> uri:http://example.com/gone uri http://example.com/gone [removed]",
		"    Trigger/default/moved [changed]",
		"      subscriber -> Service/default/new-app uri http://new-app.default.svc.cluster.local/ [added]",
		"      subscriber -> Service/default/app uri http://app.default.svc.cluster.local/ [removed]",
		"    Trigger/default/refiltered filter type = 'b' [changed]",
		"      subscriber -> Service/default/app uri http://app.default.svc.cluster.local/",
		`  Broker/default/second class="knc" served=true external=false [added]`,
		"    Trigger/default/gone [added]",
		"      subscriber -> uri:http://example.com/gone uri http://example.com/gone [added]",
		`  Channel/default/fresh class="JetStreamChannel" served=true external=false [added]`,
		"  sink Service/default/app",
		"  sink Service/default/new-app [added]",
		"outside uri:http://example.com/gone",
	}
	changes := topology.Changes(base, head)
	if diff := cmp.Diff(want, outline(changes)); diff != "" {
		t.Errorf("changes (-want +got):\n%s", diff)
	}
	if !topology.Changes(head, head).Empty() {
		t.Errorf("a graph compared with itself has changes:\n%s", strings.Join(outline(topology.Changes(head, head)), "\n"))
	}

	// The changes draw, with their status.
	var mermaid bytes.Buffer
	if err := topology.WriteMermaid(&mermaid, changes); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"classDef added", "classDef removed", "classDef changed", "linkStyle "} {
		if !strings.Contains(mermaid.String(), want) {
			t.Errorf("Mermaid of changes lacks %q:\n%s", want, mermaid.String())
		}
	}
	checkSVG(t, changes)
}

func TestTriggerFilter(t *testing.T) {
	str := func(s string) *string { return &s }
	tests := []struct {
		name    string
		filter  *model.TriggerFilter
		filters []model.SubscriptionsAPIFilter
		want    string
	}{
		{"none", nil, nil, ""},
		{"empty attributes", &model.TriggerFilter{}, nil, ""},
		{"attributes", &model.TriggerFilter{Attributes: map[string]string{"type": "a", "source": ""}}, nil, "EXISTS source AND type = 'a'"},
		{"filters win over filter", &model.TriggerFilter{Attributes: map[string]string{"type": "a"}}, []model.SubscriptionsAPIFilter{{Exact: map[string]string{"type": "b"}}}, "type = 'b'"},
		{"prefix and suffix escape LIKE", nil, []model.SubscriptionsAPIFilter{{Prefix: map[string]string{"type": "a_b%"}}, {Suffix: map[string]string{"source": `x\`}}}, `type LIKE 'a\_b\%%' AND source LIKE '%x\\'`},
		{"every dialect of one entry", nil, []model.SubscriptionsAPIFilter{{Exact: map[string]string{"type": "t"}, Prefix: map[string]string{"source": "s"}}}, "type = 't' AND source LIKE 's%'"},
		{"quotes", nil, []model.SubscriptionsAPIFilter{{Exact: map[string]string{"type": "it's"}}}, `type = 'it\'s'`},
		{"one cesql", nil, []model.SubscriptionsAPIFilter{{CESQL: str("a = 'x' OR b = 'y'")}}, "a = 'x' OR b = 'y'"},
		{"cesql combined", nil, []model.SubscriptionsAPIFilter{{CESQL: str("a = 'x' OR b = 'y'")}, {Exact: map[string]string{"type": "t"}}}, "(a = 'x' OR b = 'y') AND type = 't'"},
		{"any of all", nil, []model.SubscriptionsAPIFilter{{Any: []model.SubscriptionsAPIFilter{
			{All: []model.SubscriptionsAPIFilter{{Exact: map[string]string{"a": "1"}}, {Exact: map[string]string{"b": "2"}}}},
			{Not: &model.SubscriptionsAPIFilter{Exact: map[string]string{"c": "3"}}},
		}}}, "(a = '1' AND b = '2') OR NOT (c = '3')"},
		{"several keys in one exact", nil, []model.SubscriptionsAPIFilter{{Any: []model.SubscriptionsAPIFilter{
			{Exact: map[string]string{"a": "1", "b": "2"}}, {Exact: map[string]string{"c": "3"}},
		}}}, "(a = '1' AND b = '2') OR c = '3'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := &model.Trigger{Spec: model.TriggerSpec{Filter: tt.filter, Filters: tt.filters}}
			if got := graph.TriggerFilter(tr); got != tt.want {
				t.Errorf("TriggerFilter = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestSourcesAndFlows draws event sources feeding their sinks, a
// Sequence as its steps in order with the last step's reply, and a
// Parallel as its branches with filter, subscriber and reply.
func TestSourcesAndFlows(t *testing.T) {
	g := load(t, "testdata/projects/sources")
	want := []string{
		"namespace shop",
		`  Broker/shop/default class="knc" served=true external=false`,
		"    Trigger/shop/orders-to-pipeline filter type = 'com.example.order'",
		"      subscriber -> Sequence.flows.knative.dev/shop/order-pipeline uri http://knc-ingress.shop.svc.cluster.local/channels/shop/order-pipeline-kn-sequence-0",
		`  ApiServerSource.sources.knative.dev/shop/pod-changes class="" served=false external=false`,
		"    sink -> Broker/shop/default",
		`  Parallel.flows.knative.dev/shop/fan-out class="" served=false external=false`,
		"    Parallel.flows.knative.dev/shop/fan-out/1",
		"      subscriber -> Service.serving.knative.dev/shop/audit",
		"      reply -> Broker/shop/default",
		"    Parallel.flows.knative.dev/shop/fan-out/2",
		"      filter -> uri:https://filters.example.com/big uri https://filters.example.com/big",
		"      subscriber -> Service.serving.knative.dev/shop/big-orders",
		"      reply -> Broker/shop/default",
		`  PingSource.sources.knative.dev/shop/nightly-report class="" served=false external=false`,
		"    sink -> Broker/shop/default",
		`  Sequence.flows.knative.dev/shop/order-pipeline class="InMemoryChannel" served=false external=false`,
		"    Sequence.flows.knative.dev/shop/order-pipeline/1",
		"      subscriber -> Service.serving.knative.dev/shop/enrich",
		"    Sequence.flows.knative.dev/shop/order-pipeline/2",
		"      subscriber -> Service.serving.knative.dev/shop/store path /orders",
		"      reply -> Parallel.flows.knative.dev/shop/fan-out",
		"  sink Service.serving.knative.dev/shop/audit",
		"  sink Service.serving.knative.dev/shop/big-orders",
		"  sink Service.serving.knative.dev/shop/enrich",
		"  sink Service.serving.knative.dev/shop/store",
		"outside uri:https://filters.example.com/big",
	}
	if diff := cmp.Diff(want, outline(g)); diff != "" {
		t.Errorf("graph (-want +got):\n%s", diff)
	}
}

// TestSVG checks the geometry of every golden project's SVG.
func TestSVG(t *testing.T) {
	for name, dir := range goldenProjects {
		t.Run(name, func(t *testing.T) { checkSVG(t, load(t, dir)) })
	}
	t.Run("empty", func(t *testing.T) { checkSVG(t, &topology.Graph{}) })
}

// TestMeshSVG checks the geometry of generated meshes of 40 and 200
// Triggers over three Brokers and two Channels.
func TestMeshSVG(t *testing.T) {
	for _, triggers := range []int{40, 200} {
		t.Run(fmt.Sprint(triggers), func(t *testing.T) {
			checkSVG(t, project(t, mesh(triggers)))
		})
	}
}

// TestPNG decodes the PNG of a project: it is the SVG's drawing, at 96
// pixels to the inch, Graphviz's default, where the SVG has 72 points.
func TestPNG(t *testing.T) {
	g := load(t, "../../examples/quickstart")
	var buf bytes.Buffer
	if err := layout.WritePNG(&buf, g); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	d := checkSVG(t, g)
	const pixelsPerPoint = 96.0 / 72
	width, height := (d.viewBox.x1-d.viewBox.x0)*pixelsPerPoint, (d.viewBox.y1-d.viewBox.y0)*pixelsPerPoint
	got := img.Bounds().Size()
	if math.Abs(float64(got.X)-width) > 2 || math.Abs(float64(got.Y)-height) > 2 {
		t.Errorf("PNG is %v pixels, want the SVG's size at 96 dpi, %.0fx%.0f", got, width, height)
	}
}
