package routes_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/routing"
)

func compile(t *testing.T, files map[string]string) *routing.Table {
	t.Helper()
	dir := t.TempDir()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid() {
		t.Fatalf("invalid input:\n%v", res.Diagnostics)
	}
	table, diags := routes.Compile(res.Set, res.Config)
	if len(diags) > 0 {
		t.Fatalf("compile: %v", diags)
	}
	if err := table.Validate(); err != nil {
		t.Fatalf("the compiled table is invalid: %v", err)
	}
	return table
}

const config = `apiVersion: config.knc.dev/v1alpha1
kind: Config
clusterDomain: example.internal
external:
- {apiVersion: serving.knative.dev/v1, kind: Service, name: ksvc}
- {apiVersion: example.dev/v1, kind: Sink, name: known, url: "https://sink.example.com/in"}
`

const manifests = `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default}
spec:
  delivery:
    retry: 4
    backoffPolicy: exponential
    backoffDelay: PT0.5S
    deadLetterSink:
      ref: {apiVersion: example.dev/v1, kind: Sink, name: known}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: kafka
  annotations: {eventing.knative.dev/broker.class: Kafka}
---
apiVersion: v1
kind: Service
metadata: {name: svc}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: b-service-relative}
spec:
  broker: default
  filter: {attributes: {type: a, source: ""}}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: svc}
    uri: /hook?x=1
  delivery: {}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: a-duck-typed}
spec:
  broker: default
  filters:
  - any: [{exact: {type: a}}, {not: {cesql: "source = 'x'"}}]
  subscriber:
    ref: {apiVersion: serving.knative.dev/v1, kind: Service, name: ksvc}
    uri: extra
  delivery:
    retry: 1
    timeout: PT2S
    format: json
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: to-channel}
spec:
  broker: default
  subscriber:
    ref: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: default}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: on-kafka}
spec:
  broker: kafka
  subscriber: {uri: "http://elsewhere/"}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: default}
spec:
  delivery: {retry: 2}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: kafka-channel}
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1beta1, kind: KafkaChannel}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: reply-to-broker}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: default}
  subscriber: {uri: "http://logger.example.com/"}
  reply:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}
---
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata: {name: to-broker}
spec:
  timezone: Europe/Paris
  contentType: application/json
  data: '{"message": "hello"}'
  ceOverrides: {extensions: {team: shop}}
  sink:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}
---
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata: {name: to-service}
spec:
  schedule: "0 */2 * * *"
  dataBase64: aGVsbG8=
  sink:
    ref: {apiVersion: v1, kind: Service, name: svc}
    uri: /ping
---
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata: {name: to-kafka}
spec:
  sink:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: kafka}
---
apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata: {name: pods}
spec:
  mode: Reference
  resources: [{apiVersion: v1, kind: Pod}]
  ceOverrides: {extensions: {team: ops}}
  sink:
    ref: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: default}
---
apiVersion: sources.knative.dev/v1
kind: ContainerSource
metadata: {name: pods}
spec:
  template:
    spec:
      containers: [{name: heartbeat, image: example.com/heartbeat}]
  sink:
    ref: {apiVersion: v1, kind: Service, name: svc}
    uri: /beats
---
apiVersion: sources.knative.dev/v1
kind: SinkBinding
metadata: {name: bind}
spec:
  subject: {apiVersion: apps/v1, kind: Deployment, name: producer}
  sink:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default}
---
apiVersion: sources.example.dev/v1
kind: GitHubSource
metadata: {name: repo}
spec:
  sink: {uri: "https://hooks.example.com/github"}
`

func TestCompile(t *testing.T) {
	got := compile(t, map[string]string{"knc.yaml": config, "objects.yaml": manifests})
	brokerDelivery := &routing.Delivery{
		Retry: 4, BackoffPolicy: "exponential", BackoffDelay: routing.Duration(500 * time.Millisecond),
		DeadLetterSink: &routing.Destination{URI: "https://sink.example.com/in"},
	}
	ingress := "http://knc-ingress.default.svc.example.internal"
	want := &routing.Table{
		APIVersion: routing.APIVersion, Kind: routing.Kind,
		Brokers: []routing.Broker{{
			Source:   routing.Source{Namespace: "default", Name: "default"},
			Path:     "/brokers/default/default",
			Address:  ingress + "/brokers/default/default",
			Delivery: brokerDelivery,
			Triggers: []routing.Trigger{
				{
					Source:  routing.Source{Namespace: "default", Name: "a-duck-typed"},
					Filters: []routing.Filter{{Any: []routing.Filter{{Exact: map[string]string{"type": "a"}}, {Not: &routing.Filter{CESQL: "source = 'x'"}}}}},
					// Not in the repository: left for the runtime to resolve.
					Subscriber: routing.Destination{URI: "extra", Ref: &routing.Ref{APIVersion: "serving.knative.dev/v1", Kind: "Service", Namespace: "default", Name: "ksvc"}},
					// A Trigger that sets any delivery field ignores the Broker's.
					Delivery: &routing.Delivery{Retry: 1, Timeout: routing.Duration(2 * time.Second), Format: "json"},
				},
				{
					Source:     routing.Source{Namespace: "default", Name: "b-service-relative"},
					Attributes: map[string]string{"type": "a", "source": ""},
					Subscriber: routing.Destination{URI: "http://svc.default.svc.example.internal/hook?x=1"},
					// An empty delivery sets no field, so the Broker's applies.
					Delivery: brokerDelivery,
				},
				{
					Source:     routing.Source{Namespace: "default", Name: "to-channel"},
					Subscriber: routing.Destination{URI: ingress + "/channels/default/default"},
					Delivery:   brokerDelivery,
				},
			},
		}},
		Channels: []routing.Channel{{
			Source:   routing.Source{Namespace: "default", Name: "default"},
			Path:     "/channels/default/default",
			Address:  ingress + "/channels/default/default",
			Delivery: &routing.Delivery{Retry: 2},
			Subscriptions: []routing.Subscription{{
				Source:     routing.Source{Namespace: "default", Name: "reply-to-broker"},
				Subscriber: &routing.Destination{URI: "http://logger.example.com/"},
				Reply:      &routing.Destination{URI: ingress + "/brokers/default/default"},
				Delivery:   &routing.Delivery{Retry: 2},
			}},
		}},
		PingSources: []routing.PingSource{
			{
				Source:   routing.Source{Namespace: "default", Name: "to-broker"},
				Schedule: "* * * * *", Timezone: "Europe/Paris", ContentType: "application/json", Data: `{"message": "hello"}`,
				Extensions: map[string]string{"team": "shop"},
				Sink:       routing.Destination{URI: ingress + "/brokers/default/default"}, SinkPath: "/brokers/default/default",
			},
			{
				// A Broker of another class is no ingress of the table:
				// the runtime resolves its address.
				Source:   routing.Source{Namespace: "default", Name: "to-kafka"},
				Schedule: "* * * * *",
				Sink:     routing.Destination{Ref: &routing.Ref{APIVersion: "eventing.knative.dev/v1", Kind: "Broker", Namespace: "default", Name: "kafka"}},
			},
			{
				Source:   routing.Source{Namespace: "default", Name: "to-service"},
				Schedule: "0 */2 * * *", DataBase64: "aGVsbG8=",
				Sink: routing.Destination{URI: "http://svc.default.svc.example.internal/ping"},
			},
		},
		// Every other source is listed with its kind and resolved sink,
		// sorted by namespace, name and kind.
		Sources: []routing.EventSource{
			{
				Source: routing.Source{Namespace: "default", Name: "bind"}, APIVersion: "sources.knative.dev/v1", Kind: "SinkBinding",
				Sink: routing.Destination{URI: ingress + "/brokers/default/default"}, SinkPath: "/brokers/default/default",
			},
			{
				Source: routing.Source{Namespace: "default", Name: "pods"}, APIVersion: "sources.knative.dev/v1", Kind: "ApiServerSource",
				Extensions: map[string]string{"team": "ops"},
				Sink:       routing.Destination{URI: ingress + "/channels/default/default"}, SinkPath: "/channels/default/default",
			},
			{
				Source: routing.Source{Namespace: "default", Name: "pods"}, APIVersion: "sources.knative.dev/v1", Kind: "ContainerSource",
				Sink: routing.Destination{URI: "http://svc.default.svc.example.internal/beats"},
			},
			{
				Source: routing.Source{Namespace: "default", Name: "repo"}, APIVersion: "sources.example.dev/v1", Kind: "GitHubSource",
				Sink: routing.Destination{URI: "https://hooks.example.com/github"},
			},
		},
	}
	// Spec hashes are checked separately; they are opaque here.
	opts := cmp.Transformer("noHash", func(o routing.Source) routing.Source { o.SpecHash = ""; return o })
	if d := cmp.Diff(want, got, opts); d != "" {
		t.Errorf("Compile() (-want +got):\n%s", d)
	}
}

// TestKeepDeadLetteredAnnotation: knc.dev/keep-dead-lettered of a Trigger
// or Subscription wins; without one, its Broker's or Channel's applies.
func TestKeepDeadLetteredAnnotation(t *testing.T) {
	got := compile(t, map[string]string{"objects.yaml": `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: keeping
  annotations: {knc.dev/keep-dead-lettered: "true"}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: plain}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: inherits}
spec: {broker: keeping, subscriber: {uri: "http://s/"}}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: opts-out
  annotations: {knc.dev/keep-dead-lettered: "false"}
spec: {broker: keeping, subscriber: {uri: "http://s/"}}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: plain}
spec: {broker: plain, subscriber: {uri: "http://s/"}}
---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: opts-in
  annotations: {knc.dev/keep-dead-lettered: "true"}
spec: {broker: plain, subscriber: {uri: "http://s/"}}
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: keeping
  annotations: {knc.dev/keep-dead-lettered: "true"}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: inherits}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: keeping}
  subscriber: {uri: "http://s/"}
---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: opts-out
  annotations: {knc.dev/keep-dead-lettered: "false"}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: keeping}
  subscriber: {uri: "http://s/"}
`})
	keep := map[string]bool{}
	for _, b := range got.Brokers {
		for _, tr := range b.Triggers {
			keep["trigger "+b.Name+"/"+tr.Name] = tr.KeepDeadLettered
		}
	}
	for _, c := range got.Channels {
		for _, s := range c.Subscriptions {
			keep["subscription "+c.Name+"/"+s.Name] = s.KeepDeadLettered
		}
	}
	want := map[string]bool{
		"trigger keeping/inherits": true, "trigger keeping/opts-out": false,
		"trigger plain/plain": false, "trigger plain/opts-in": true,
		"subscription keeping/inherits": true, "subscription keeping/opts-out": false,
	}
	if d := cmp.Diff(want, keep); d != "" {
		t.Errorf("KeepDeadLettered (-want +got):\n%s", d)
	}
}

func TestSpecHashFollowsTheSpec(t *testing.T) {
	base := compile(t, map[string]string{"knc.yaml": config, "objects.yaml": manifests})
	// An unchanged spec in a changed file hashes the same.
	withComment := compile(t, map[string]string{"knc.yaml": config, "objects.yaml": manifests + "\n---\n# trailing comment\n"})
	if a, b := base.Brokers[0].Triggers[1].SpecHash, withComment.Brokers[0].Triggers[1].SpecHash; a != b || a == "" {
		t.Errorf("hash of an unchanged spec changed: %q vs %q", a, b)
	}
	changed := compile(t, map[string]string{"knc.yaml": config, "objects.yaml": manifests + `---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: b-service-relative, namespace: other}
spec:
  broker: default
  subscriber: {uri: "http://x/"}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: default, namespace: other}
`})
	if base.Brokers[0].SpecHash == "" || len(changed.Brokers) != 2 {
		t.Fatalf("unexpected table: %+v", changed.Brokers)
	}
	if changed.Brokers[1].Triggers[0].SpecHash == base.Brokers[0].Triggers[1].SpecHash {
		t.Errorf("different specs hash the same")
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"PT0.2S", 200 * time.Millisecond},
		{"PT1,5S", 1500 * time.Millisecond},
		{"PT5M", 5 * time.Minute},
		{"PT1H2M3S", time.Hour + 2*time.Minute + 3*time.Second},
		{"P1D", 24 * time.Hour},
		{"P1W", 7 * 24 * time.Hour},
		{"P1DT12H", 36 * time.Hour},
		{"P0", 0},
		{"PT1.5M", 90 * time.Second},
		{"P1DT", 24 * time.Hour},
		{"-PT1S", -time.Second},
	} {
		got, err := routes.ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "P", "PT", "1S", "200ms", "-", "PT1M1M"} {
		if _, err := routes.ParseDuration(bad); err == nil {
			t.Errorf("ParseDuration(%q) succeeded, want an error", bad)
		}
	}
}

// A Sequence and a Parallel route through the Channels and Subscriptions
// the flows stage compiled them into: a reference to either resolves to
// its ingress Channel, each step replies to the next step's Channel, and
// the table names each flow's parts for its status. A flow of a channel
// class knc does not run is left to that class's implementation.
func TestFlows(t *testing.T) {
	table := compile(t, map[string]string{"knc.yaml": config, "m.yaml": `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: seq}
spec:
  steps:
  - uri: http://one.example/
  - uri: http://two.example/
  reply: {ref: {apiVersion: flows.knative.dev/v1, kind: Parallel, name: par}}
---
apiVersion: flows.knative.dev/v1
kind: Parallel
metadata: {name: par}
spec:
  branches:
  - filter: {uri: http://filter.example/}
    subscriber: {uri: http://sub.example/}
---
apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: kafka}
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1beta1, kind: KafkaChannel}
  steps:
  - uri: http://one.example/
`})
	ingress := func(name string) string {
		return "http://knc-ingress.default.svc.example.internal/channels/default/" + name
	}
	got := map[string]string{}
	for _, c := range table.Channels {
		for _, s := range c.Subscriptions {
			var sub, reply string
			if s.Subscriber != nil {
				sub = s.Subscriber.URI
			}
			if s.Reply != nil {
				reply = s.Reply.URI
			}
			got[c.Name+" "+s.Name] = sub + " -> " + reply
		}
	}
	want := map[string]string{
		"seq-kn-sequence-0 seq-kn-sequence-0":      "http://one.example/ -> " + ingress("seq-kn-sequence-1"),
		"seq-kn-sequence-1 seq-kn-sequence-1":      "http://two.example/ -> " + ingress("par-kn-parallel"),
		"par-kn-parallel par-kn-parallel-filter-0": "http://filter.example/ -> " + ingress("par-kn-parallel-0"),
		"par-kn-parallel-0 par-kn-parallel-0":      "http://sub.example/ -> ",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("subscriptions (-want +got):\n%s", diff)
	}
	wantSeq := []routing.Sequence{{Source: routing.Source{Namespace: "default", Name: "seq"},
		Channels: []string{"seq-kn-sequence-0", "seq-kn-sequence-1"}, Subscriptions: []string{"seq-kn-sequence-0", "seq-kn-sequence-1"}}}
	wantPar := []routing.Parallel{{Source: routing.Source{Namespace: "default", Name: "par"}, Channel: "par-kn-parallel",
		Branches: []routing.Branch{{Channel: "par-kn-parallel-0", FilterSubscription: "par-kn-parallel-filter-0", Subscription: "par-kn-parallel-0"}}}}
	ignoreHash := cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".SpecHash" }, cmp.Ignore())
	if diff := cmp.Diff(wantSeq, table.Sequences, ignoreHash); diff != "" {
		t.Errorf("sequences (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantPar, table.Parallels, ignoreHash); diff != "" {
		t.Errorf("parallels (-want +got):\n%s", diff)
	}
}
