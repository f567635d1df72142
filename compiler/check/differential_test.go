package check

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"
	cueyaml "cuelang.org/go/encoding/yaml"
	"go.yaml.in/yaml/v3"

	"github.com/knc-dev/knc/compiler/diag"
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
  subscribers: []
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
	"PingSource": `apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: tick
spec:
  schedule: "*/5 * * * *"
  timezone: Europe/Paris
  contentType: application/json
  data: '{"a": 1}'
  sink: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}}
  ceOverrides: {extensions: {team: a}}
`,
	"ApiServerSource": `apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: watch
spec:
  mode: Resource
  serviceAccountName: watcher
  resources:
  - apiVersion: v1
    kind: Pod
    selector: {matchLabels: {app: a}, matchExpressions: [{key: tier, operator: In, values: [x]}]}
  owner: {apiVersion: apps/v1, kind: ReplicaSet}
  namespaceSelector: {matchLabels: {team: a}}
  filters: [{exact: {type: a}}]
  sink: {uri: "https://sink.example.com/"}
`,
	"ContainerSource": `apiVersion: sources.knative.dev/v1
kind: ContainerSource
metadata:
  name: beat
spec:
  template:
    spec:
      containers:
      - name: beat
        image: registry.example.com/beat
        args: [--period=1]
  sink: {ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: display}, uri: /beats}
`,
	"SinkBinding": `apiVersion: sources.knative.dev/v1
kind: SinkBinding
metadata:
  name: bind
spec:
  subject: {apiVersion: apps/v1, kind: Deployment, name: api, namespace: default}
  sink: {uri: "https://sink.example.com/"}
`,
	"Sequence": `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata:
  name: pipe
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel}
  steps:
  - ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: first}
    delivery: {retry: 2, backoffPolicy: linear}
  - uri: "https://second.example.com/"
  reply: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}}
`,
	"Parallel": `apiVersion: flows.knative.dev/v1
kind: Parallel
metadata:
  name: fan
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel}
  branches:
  - filter: {uri: "https://filter.example.com/"}
    subscriber: {ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: even}}
    reply: {uri: "https://reply.example.com/"}
    delivery: {retry: 1}
  reply: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}}
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
	{"Trigger", "spec.filters", "[{all: []}]"},
	{"Trigger", "spec.filters", "[{any: []}]"},
	{"Trigger", "spec.filters", "[{not: {}}]"},
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
	{"Channel", "spec.subscribers", "[{bogus: 1}]"},
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
	// knc.dev/keep-dead-lettered is "true" or "false" on the four kinds the
	// runtime serves, and free on the others.
	{"Broker", "metadata.annotations", "{knc.dev/keep-dead-lettered: 'true', eventing.knative.dev/broker.class: knc}"},
	{"Broker", "metadata.annotations", "{knc.dev/keep-dead-lettered: 'yes'}"},
	{"Trigger", "metadata.annotations", "{knc.dev/keep-dead-lettered: 'false'}"},
	{"Trigger", "metadata.annotations", "{knc.dev/keep-dead-lettered: 'True'}"},
	{"Channel", "metadata.annotations", "{knc.dev/keep-dead-lettered: ''}"},
	{"Subscription", "metadata.annotations", "{knc.dev/keep-dead-lettered: '1'}"},
	{"Subscription", "metadata.annotations", "{knc.dev/keep-dead-lettered: 'true'}"},
	{"PingSource", "metadata.annotations", "{knc.dev/keep-dead-lettered: 'yes'}"},
}

func TestGoValidatorsAgreeWithCUESchema(t *testing.T) {
	ctx := cuecontext.New()
	sch, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type testCase struct{ name, kind, path, src string }
	var cases []testCase
	for kind, src := range validObjects {
		cases = append(cases, testCase{kind + "/valid", kind, "", src})
	}
	for _, m := range mutations {
		src, err := mutate(validObjects[m.kind], m.path, m.value)
		if err != nil {
			t.Fatalf("%s %s: %v", m.kind, m.path, err)
		}
		cases = append(cases, testCase{fmt.Sprintf("%s/%s=%s", m.kind, m.path, m.value), m.kind, m.path, src})
	}
	for _, kind := range sortedKinds() {
		for _, lm := range leafMutations(t, validObjects[kind]) {
			cases = append(cases, testCase{fmt.Sprintf("%s/leaf/%s=%s", kind, lm.path, lm.value), kind, lm.path, lm.src})
		}
	}
	accepted, rejected := 0, 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			goErrs, goWarnings := goValidate(t, tc.src)
			cueErr := cueValidate(ctx, sch, tc.kind, tc.src)
			goRefuses := len(goErrs) > 0
			// The API server drops the status of an object it creates, so
			// knc only warns about one; the schema still describes the
			// status knc's runtime writes.
			if strings.HasPrefix(tc.path, "status") {
				goRefuses = goRefuses || len(goWarnings) > 0
			}
			if goRefuses != (cueErr != nil) {
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

func sortedKinds() []string {
	kinds := make([]string, 0, len(validObjects))
	for k := range validObjects {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// leafValues replace every leaf of a valid object, one at a time: the empty
// string, zero, a negative number, values of the wrong type, and null.
// Together with removing the leaf, they are the classes of input a
// hand-written validator most easily treats as "unset".
var leafValues = []string{`""`, "0", "-1", "[x]", "{a: b}", "true", "null"}

type leafMutation struct{ path, value, src string }

// leafMutations mutates every scalar leaf of src, and removes every field.
func leafMutations(t *testing.T, src string) []leafMutation {
	t.Helper()
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		t.Fatal(err)
	}
	var out []leafMutation
	emit := func(path, value string) {
		b, err := yaml.Marshal(&root)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, leafMutation{path, value, string(b)})
	}
	var walk func(n *yaml.Node, path string)
	walk = func(n *yaml.Node, path string) {
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if path != "" {
					p = path + "." + k.Value
				}
				if p == "apiVersion" || p == "kind" {
					continue
				}
				// Absent: take the pair out, emit, and put it back.
				saved := slices.Clone(n.Content)
				n.Content = slices.Delete(n.Content, i, i+2)
				emit(p, "<delete>")
				n.Content = saved
				walk(v, p)
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				walk(c, fmt.Sprintf("%s[%d]", path, i))
			}
		case yaml.ScalarNode:
			saved := *n
			for _, v := range leafValues {
				var repl yaml.Node
				if err := yaml.Unmarshal([]byte(v), &repl); err != nil {
					t.Fatal(err)
				}
				*n = *repl.Content[0]
				emit(path, v)
			}
			*n = saved
		}
	}
	walk(root.Content[0], "")
	return out
}

// goValidate returns the errors and the warnings of knc's checks of one
// object, with every feature enabled, as the schema has every field.
func goValidate(t *testing.T, src string) (errs, warnings []string) {
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
	for _, d := range diags {
		errs = append(errs, d.String())
	}
	c := &checker{features: model.AllFeatures(), defaults: model.Defaults{Namespace: "default"}}
	for _, doc := range docs {
		_, diags := c.object(doc)
		for _, d := range diags {
			if d.Severity == diag.Warning {
				warnings = append(warnings, d.String())
			} else {
				errs = append(errs, d.String())
			}
		}
	}
	return errs, warnings
}

func cueValidate(ctx *cue.Context, sch cue.Value, kind, src string) error {
	src, err := pruneNulls(src)
	if err != nil {
		return err
	}
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

// pruneNulls drops the fields whose value is null, as the API server does
// before admission, so that the schema judges what Knative sees. Labels and
// annotations are decoded as ObjectMeta, where a null value is "", so they
// keep theirs.
func pruneNulls(src string) (string, error) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(src), &root); err != nil {
		return "", err
	}
	var walk func(n *yaml.Node)
	walk = func(n *yaml.Node) {
		if n.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(n.Content); {
				if v := n.Content[i+1]; v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
					n.Content = slices.Delete(n.Content, i, i+2)
					continue
				}
				i += 2
			}
		}
		for i, c := range n.Content {
			if n.Kind == yaml.MappingNode && i%2 == 1 && (n.Content[i-1].Value == "labels" || n.Content[i-1].Value == "annotations") {
				for j := 1; j < len(c.Content); j += 2 {
					if v := c.Content[j]; v.Kind == yaml.ScalarNode && v.Tag == "!!null" {
						v.Tag, v.Value = "!!str", ""
					}
				}
				continue
			}
			walk(c)
		}
	}
	walk(&root)
	out, err := yaml.Marshal(&root)
	return string(out), err
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
	for _, tc := range []struct{ rule, kind, path, value string }{
		{"cesql", "Trigger", "spec.filters", `[{cesql: "type = "}]`},
		{"cesql", "Trigger", "spec.filters", `[{cesql: "1 +"}]`},
		{"cesql", "Trigger", "spec.filters", `[{any: [{cesql: "source LIKE"}]}]`},
		{"dialects", "Trigger", "spec.filters", "[{exact: {type: a}, prefix: {type: b}}]"},
		{"dialects", "Trigger", "spec.filters", "[{not: {exact: {type: a}, cesql: 'true'}}]"},
		{"destination", "Trigger", "spec.subscriber", "{ref: {apiVersion: v1, kind: Service, name: s}, uri: 'http://x/'}"},
		{"destination", "Trigger", "spec.subscriber", "{uri: 'http://x/', CACerts: 'not PEM'}"},
		{"duration", "Trigger", "spec.delivery", "{backoffDelay: PT1S, retryAfterMax: '-PT1S'}"},
		{"annotations", "Trigger", "metadata.annotations", "{knative.dev/dependency: '{}'}"},
		{"annotations", "Trigger", "metadata.annotations", "{eventing.knative.dev/injection: maybe}"},
		{"destination", "Subscription", "spec.reply", "{uri: /relative}"},
		{"subscribers", "Channel", "spec.subscribers", "[{subscriberUri: 'http://a/'}]"},
		{"destination", "Subscription", "spec.reply", "{CACerts: x}"},
		{"cron", "PingSource", "spec.schedule", `"7"`},
		{"cron", "PingSource", "spec.schedule", `"61 * * * *"`},
		{"cron", "PingSource", "spec.timezone", "Atlantis/Capital"},
		{"pingdata", "PingSource", "spec.data", "not json"},
		{"pingdata", "PingSource", "spec", `{sink: {uri: "https://sink.example.com/"}, dataBase64: "%%%"}`},
		{"pingdata", "PingSource", "spec.dataBase64", "e30="},
		{"pingdata", "PingSource", "spec", `{sink: {uri: "https://sink.example.com/"}, dataBase64: "bm90IGpzb24=", contentType: application/json}`},
		{"podtemplate", "ContainerSource", "spec.template.spec.containers", "[{image: x, imagePullPolicyy: Always}]"},
		{"podtemplate", "ContainerSource", "spec.template.spec.nodeName", "[x]"},
		{"selector", "SinkBinding", "spec.subject", "{apiVersion: apps/v1, kind: Deployment, selector: {matchExpressions: [{key: a, operator: Like}]}}"},
		{"namespace", "SinkBinding", "spec.subject.namespace", "other"},
	} {
		t.Run(tc.rule+"/"+tc.kind+"/"+tc.value, func(t *testing.T) {
			src, err := mutate(validObjects[tc.kind], tc.path, tc.value)
			if err != nil {
				t.Fatal(err)
			}
			if err := cueValidate(ctx, sch, tc.kind, src); err != nil {
				t.Fatalf("the schema rejects it, so the rule is not Go-only: %v", err)
			}
			if errs, _ := goValidate(t, src); len(errs) == 0 {
				t.Errorf("the Go validators accept an object that breaks rule %s:\n%s", tc.rule, src)
			}
		})
	}
}

// TestDurationSchemaAgreesWithParser compares the schema's #Duration with
// the parser Knative uses, on every string of up to four characters over
// the alphabet of durations and on random longer ones. Overflow is the
// parser's own business (@knc(rule=duration)) and stays out of reach here.
func TestDurationSchemaAgreesWithParser(t *testing.T) {
	ctx := cuecontext.New()
	sch, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def := sch.LookupPath(cue.ParsePath("#Duration"))
	const alphabet = "PTYMWDHS01.,-+x"
	var inputs []string
	var grow func(prefix string, n int)
	grow = func(prefix string, n int) {
		inputs = append(inputs, prefix)
		if n == 0 {
			return
		}
		for _, c := range alphabet {
			grow(prefix+string(c), n-1)
		}
	}
	grow("P", 3)
	grow("-P", 2)
	grow("PT", 3)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		b := []byte("P")
		for range 2 + rng.IntN(8) {
			b = append(b, alphabet[rng.IntN(len(alphabet))])
		}
		inputs = append(inputs, string(b))
	}
	inputs = append(inputs, "", "P0", "+P0", "PT1.5M", "P1.5W2Y", "PT.S", "P+Y", "PT1,5.3S", "P1Y2M3W4DT5H6M7.8S")
	checked := 0
	for _, in := range inputs {
		_, _, perr := model.ParseDuration(in)
		serr := def.Unify(ctx.Encode(in)).Validate(cue.Concrete(true))
		if (perr == nil) != (serr == nil) {
			t.Errorf("%q: parser says %v, schema says %v", in, perr, serr)
		}
		checked++
	}
	if checked < 10000 {
		t.Errorf("only %d inputs checked", checked)
	}
}
