package check

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/schema"
)

// The Go validators are the fast path; the CUE schema is the source of
// truth. This test runs both over valid objects and single mutations of
// them, and fails wherever they disagree on accepting an object.

var validObjects = map[string]string{
	"Broker": `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: default
  namespace: team-a
  labels: {app: shop}
  annotations: {eventing.knative.dev/broker.class: knc}
  generation: 2
spec:
  config: {apiVersion: v1, kind: ConfigMap, name: broker-config}
  delivery:
    deadLetterSink: {ref: {apiVersion: v1, kind: Service, name: dls}}
    retry: 3
    backoffPolicy: exponential
    backoffDelay: PT0.2S
    timeout: PT5S
    retryAfterMax: PT1M
    format: json
`,
	"Trigger": `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: orders
spec:
  broker: default
  filter:
    attributes: {type: com.example.order, source: ""}
  filters:
  - exact: {type: com.example.order}
  - prefix: {source: /shop}
  - suffix: {subject: .json}
  - any:
    - exact: {type: a}
    - not: {cesql: "source LIKE 'x%'"}
  - all:
    - exact: {type: a}
  - cesql: "type = 'a'"
  subscriber:
    ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: orders, namespace: team-a}
    uri: /hook
  delivery:
    retry: 0
    backoffPolicy: linear
    backoffDelay: P1DT2H
`,
	"Channel": `apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: audit
spec:
  channelTemplate:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
    spec: {anything: [1, 2]}
  subscribers:
  - uid: abc
    generation: 1
    subscriberUri: http://a/
    replyUri: http://b/
  delivery:
    retry: 1
`,
	"Subscription": `apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: audit-log
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: audit}
  subscriber: {uri: "http://logger.default.svc.cluster.local/"}
  reply: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}}
  delivery:
    deadLetterSink: {uri: "https://dls.example.com/x"}
`,
}

// mutations are applied to the valid object of a kind: set path to a YAML
// value, or delete it when value is "<delete>".
var mutations = []struct {
	kind, path, value string
}{
	{"Broker", "apiVersion", "eventing.knative.dev/v2"},
	{"Broker", "metadata", "<delete>"},
	{"Broker", "metadata.name", "<delete>"},
	{"Broker", "metadata.name", "Default"},
	{"Broker", "metadata.name", "-a"},
	{"Broker", "metadata.name", "a..b"},
	{"Broker", "metadata.name", `""`},
	{"Broker", "metadata.name", "a." + strings.Repeat("b", 252)},
	{"Broker", "metadata.name", "123"},
	{"Broker", "metadata.namespace", "a.b"},
	{"Broker", "metadata.namespace", strings.Repeat("n", 64)},
	{"Broker", "metadata.labels", "{a: 1}"},
	{"Broker", "metadata.generation", "-1"},
	{"Broker", "metadata.bogus", "1"},
	{"Broker", "spec", "<delete>"},
	{"Broker", "spec", "{}"},
	{"Broker", "spec.bogus", "1"},
	{"Broker", "spec.config.name", "<delete>"},
	{"Broker", "spec.config.kind", `""`},
	{"Broker", "spec.config.apiVersion", "<delete>"},
	{"Broker", "spec.delivery.retry", "-1"},
	{"Broker", "spec.delivery.retry", "2147483648"},
	{"Broker", "spec.delivery.retry", `"3"`},
	{"Broker", "spec.delivery.retry", "1.5"},
	{"Broker", "spec.delivery.backoffPolicy", "random"},
	{"Broker", "spec.delivery.backoffDelay", "0.2s"},
	{"Broker", "spec.delivery.backoffDelay", "P"},
	{"Broker", "spec.delivery.backoffDelay", "PT"},
	{"Broker", "spec.delivery.backoffDelay", "P1DT"},
	{"Broker", "spec.delivery.backoffDelay", "PT1.5S"},
	{"Broker", "spec.delivery.timeout", "PT1,5S"},
	{"Broker", "spec.delivery.retryAfterMax", "1m"},
	{"Broker", "spec.delivery.format", "xml"},
	{"Broker", "spec.delivery.deadLetterSink", "{}"},
	{"Broker", "spec.delivery.deadLetterSink", "{uri: /x}"},
	{"Broker", "spec.delivery.deadLetterSink", "{uri: x.example.com}"},
	{"Broker", "spec.delivery.deadLetterSink.ref.name", "<delete>"},
	{"Broker", "spec.delivery.unknown", "1"},
	{"Broker", "status", "{observedGeneration: 1, conditions: [{type: Ready, status: 'True'}]}"},
	{"Broker", "status", "{conditions: [{type: Ready, status: 'Yes'}]}"},
	{"Broker", "status", "{conditions: [{status: 'True'}]}"},
	{"Broker", "status", "{conditions: [{type: Ready, status: 'True', severity: Error}]}"},
	{"Broker", "status", "{address: {url: 'http://x/'}, deadLetterSinkUri: 'http://d/'}"},
	{"Trigger", "spec", "<delete>"},
	{"Trigger", "spec.broker", "<delete>"},
	{"Trigger", "spec.broker", `""`},
	{"Trigger", "spec.broker", "Default"},
	{"Trigger", "spec.subscriber", "<delete>"},
	{"Trigger", "spec.subscriber", "{}"},
	{"Trigger", "spec.subscriber", "{uri: /relative}"},
	{"Trigger", "spec.subscriber", "{uri: 'http://ok.example/'}"},
	{"Trigger", "spec.subscriber.ref.kind", "<delete>"},
	{"Trigger", "spec.subscriber.uri", `""`},
	{"Trigger", "spec.subscriber.bogus", "1"},
	{"Trigger", "spec.subscriber", "{uri: ''}"},
	{"Trigger", "spec.subscriber.ref.bogus", "1"},
	{"Trigger", "spec.filters", "[{not: {exact: {type: a}, bogus: 1}}]"},
	{"Trigger", "spec.subscriber.ref", "<delete>"},
	{"Trigger", "spec.filter", "{}"},
	{"Trigger", "spec.filter.attributes", "{Type: a}"},
	{"Trigger", "spec.filter.attributes", "{type-x: a}"},
	{"Trigger", "spec.filter.attributes", "{type: 1}"},
	{"Trigger", "spec.filter.bogus", "1"},
	{"Trigger", "spec.filters", "[]"},
	{"Trigger", "spec.filters", "[{}]"},
	{"Trigger", "spec.filters", "[{exact: {}}]"},
	{"Trigger", "spec.filters", "[{prefix: {}}]"},
	{"Trigger", "spec.filters", "[{suffix: {a: b, c: d}}]"},
	{"Trigger", "spec.filters", "[{exact: {Type: a}}]"},
	{"Trigger", "spec.filters", "[{exact: {type: a}, prefix: {type: b}}]"},
	{"Trigger", "spec.filters", "[{all: []}]"},
	{"Trigger", "spec.filters", "[{any: []}]"},
	{"Trigger", "spec.filters", "[{not: {}}]"},
	{"Trigger", "spec.filters", "[{not: {exact: {type: a}, cesql: 'true'}}]"},
	{"Trigger", "spec.filters", "[{all: [{any: [{not: {exact: {type: a}}}]}]}]"},
	{"Trigger", "spec.filters", "[{all: [{any: [{not: {exact: {}}}]}]}]"},
	{"Trigger", "spec.filters", "[{exact: {type: 1}}]"},
	{"Trigger", "spec.filters", "[{unknown: {type: a}}]"},
	{"Trigger", "spec.filters", "{exact: {type: a}}"},
	{"Trigger", "spec.delivery.backoffPolicy", "Linear"},
	{"Trigger", "status", "{subscriberUri: 'http://x/', observedGeneration: -1}"},
	{"Channel", "spec", "<delete>"},
	{"Channel", "spec.channelTemplate.kind", "<delete>"},
	{"Channel", "spec.channelTemplate.apiVersion", `""`},
	{"Channel", "spec.channelTemplate.spec", "<delete>"},
	{"Channel", "spec.channelTemplate.extra", "1"},
	{"Channel", "spec.subscribers", "[{generation: -1}]"},
	{"Channel", "spec.subscribers", "[{bogus: 1}]"},
	{"Channel", "spec.subscribers", "[{delivery: {retry: -2}}]"},
	{"Channel", "spec.delivery.retry", "-1"},
	{"Channel", "status", "{subscribers: [{uid: a, ready: 'True'}]}"},
	{"Channel", "status", "{subscribers: [{uid: a}]}"},
	{"Channel", "status", "{subscribers: [{uid: a, ready: 'Maybe'}]}"},
	{"Subscription", "spec", "<delete>"},
	{"Subscription", "spec.channel", "<delete>"},
	{"Subscription", "spec.channel.name", "<delete>"},
	{"Subscription", "spec.channel.namespace", "Bad_NS"},
	{"Subscription", "spec.subscriber", "<delete>"},
	{"Subscription", "spec.reply", "<delete>"},
	{"Subscription", "spec", "{channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: audit}}"},
	{"Subscription", "spec.subscriber", "{uri: relative}"},
	{"Subscription", "spec.reply", "{}"},
	{"Subscription", "spec.delivery.deadLetterSink.uri", "/x"},
	{"Subscription", "spec.filter", "{}"},
}

func TestGoValidatorsAgreeWithCUESchema(t *testing.T) {
	ctx := cuecontext.New()
	sch, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type testCase struct{ name, kind, src string }
	var cases []testCase
	for kind, src := range validObjects {
		cases = append(cases, testCase{kind + "/valid", kind, src})
	}
	for _, m := range mutations {
		src, err := mutate(validObjects[m.kind], m.path, m.value)
		if err != nil {
			t.Fatalf("%s %s: %v", m.kind, m.path, err)
		}
		cases = append(cases, testCase{fmt.Sprintf("%s/%s=%s", m.kind, m.path, m.value), m.kind, src})
	}
	accepted, rejected := 0, 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			goErrs := goValidate(t, tc.src)
			cueErr := cueValidate(ctx, sch, tc.kind, tc.src)
			if (len(goErrs) == 0) != (cueErr == nil) {
				t.Errorf("the Go validators and the CUE schema disagree:\nGo:  %v\nCUE: %v\ninput:\n%s", goErrs, cueErr, tc.src)
			}
			if cueErr == nil {
				accepted++
			} else {
				rejected++
			}
		})
	}
	// Both sides must be exercised, or the agreement proves nothing.
	if accepted < 10 || rejected < 50 {
		t.Errorf("corpus too one-sided: %d accepted, %d rejected", accepted, rejected)
	}
}

func goValidate(t *testing.T, src string) []string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "object.yaml")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	docs, diags, err := load.LoadFiles([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, d := range diags {
		out = append(out, d.String())
	}
	c := &checker{features: model.Features{model.FeatureNewTriggerFilters: true, model.FeatureDeliveryTimeout: true, model.FeatureDeliveryRetryAfter: true}}
	for _, doc := range docs {
		_, diags := c.object(doc)
		for _, d := range diags {
			out = append(out, d.String())
		}
	}
	return out
}

func cueValidate(ctx *cue.Context, sch cue.Value, kind, src string) error {
	f, err := cueyaml.Extract("object.yaml", []byte(src))
	if err != nil {
		return err
	}
	v := ctx.BuildFile(f)
	if err := v.Err(); err != nil {
		return err
	}
	def := sch.LookupPath(cue.ParsePath(schema.Kinds[kind]))
	return def.Unify(v).Validate(cue.Concrete(true))
}

// mutate sets or deletes the value at a dotted path in a YAML document.
func mutate(src, path, value string) (string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		return "", err
	}
	segs := strings.Split(path, ".")
	n := root.Content[0]
	for _, seg := range segs[:len(segs)-1] {
		next := mapValue(n, seg)
		if next == nil {
			next = &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map"}
			n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: seg}, next)
		}
		n = next
	}
	last := segs[len(segs)-1]
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == last {
			n.Content = append(n.Content[:i], n.Content[i+2:]...)
			break
		}
	}
	if value != "<delete>" {
		var v yaml.Node
		if err := yaml.Unmarshal([]byte(value), &v); err != nil {
			return "", err
		}
		n.Content = append(n.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: last}, v.Content[0])
	}
	out, err := yaml.Marshal(&root)
	return string(out), err
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

// TestGoOnlyRules covers the rules CUE cannot state, marked
// @knc(rule=NAME) in the schema: the schema accepts these objects, and the
// Go validators must reject them.
func TestGoOnlyRules(t *testing.T) {
	ctx := cuecontext.New()
	sch, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ rule, path, value string }{
		{"cesql", "spec.filters", `[{cesql: "type = "}]`},
		{"cesql", "spec.filters", `[{cesql: "1 +"}]`},
		{"cesql", "spec.filters", `[{any: [{cesql: "source LIKE"}]}]`},
	} {
		t.Run(tc.rule+"/"+tc.value, func(t *testing.T) {
			src, err := mutate(validObjects["Trigger"], tc.path, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if err := cueValidate(ctx, sch, "Trigger", src); err != nil {
				t.Fatalf("the schema rejects it, so the rule is not Go-only: %v", err)
			}
			if errs := goValidate(t, src); len(errs) == 0 {
				t.Errorf("the Go validators accept an object that breaks rule %s:\n%s", tc.rule, src)
			}
		})
	}
}
