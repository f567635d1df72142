package flows_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/flows"
	"github.com/knc-dev/knc/compiler/model"
)

// The expected objects are what knative/eventing 8cf4c4b's
// pkg/reconciler/sequence/resources and pkg/reconciler/parallel/resources
// build for the same flows (names from SequenceChannelName,
// ParallelBranchChannelName and the others, wiring from NewSubscription
// and NewFilterSubscription), written out by hand: koracle runs Knative's
// admission only and has no command that runs those functions. The one
// difference is knc's: the channels are messaging.knative.dev/v1 Channels
// of the template's class, not objects of the template's kind (see the
// package comment).
func TestGenerated(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{{
		name: "sequence of three steps with a reply and a template",
		in: `
apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: seq, namespace: ns}
spec:
  channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel, spec: {delivery: {retry: 2}}}
  steps:
  - ref: {apiVersion: v1, kind: Service, name: first, namespace: ns}
  - uri: http://second.example/
    delivery: {retry: 5, backoffDelay: PT1S}
  - ref: {apiVersion: v1, kind: Service, name: third, namespace: ns}
    uri: /path
  reply:
    ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default, namespace: ns}
`,
		want: `
channels:
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: seq-kn-sequence-0, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel, spec: {delivery: {retry: 2}}}}
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: seq-kn-sequence-1, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel, spec: {delivery: {retry: 2}}}}
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: seq-kn-sequence-2, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel, spec: {delivery: {retry: 2}}}}
subscriptions:
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: seq-kn-sequence-0, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: seq-kn-sequence-0}
    subscriber: {ref: {apiVersion: v1, kind: Service, name: first, namespace: ns}}
    reply: {ref: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: seq-kn-sequence-1, namespace: ns}}
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: seq-kn-sequence-1, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: seq-kn-sequence-1}
    subscriber: {uri: "http://second.example/"}
    reply: {ref: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: seq-kn-sequence-2, namespace: ns}}
    delivery: {retry: 5, backoffDelay: PT1S}
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: seq-kn-sequence-2, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: seq-kn-sequence-2}
    subscriber: {ref: {apiVersion: v1, kind: Service, name: third, namespace: ns}, uri: /path}
    reply: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: default, namespace: ns}}
`,
	}, {
		name: "sequence without template or reply: knc's channel class, no reply on the last step",
		in: `
apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: s, namespace: ns}
spec:
  steps:
  - uri: http://only.example/
`,
		want: `
channels:
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: s-kn-sequence-0, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knc.dev/v1alpha1, kind: JetStreamChannel}}
subscriptions:
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: s-kn-sequence-0, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: s-kn-sequence-0}
    subscriber: {uri: "http://only.example/"}
`,
	}, {
		name: "parallel: a filtered branch with its own reply, an unfiltered one with the parallel's",
		in: `
apiVersion: flows.knative.dev/v1
kind: Parallel
metadata: {name: par, namespace: ns}
spec:
  branches:
  - filter: {uri: "http://filter.example/"}
    subscriber: {uri: "http://sub0.example/"}
    reply: {uri: "http://reply0.example/"}
    delivery: {retry: 1}
  - subscriber: {ref: {apiVersion: v1, kind: Service, name: sub1, namespace: ns}}
  reply: {uri: "http://reply.example/"}
`,
		want: `
channels:
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: par-kn-parallel, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knc.dev/v1alpha1, kind: JetStreamChannel}}
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: par-kn-parallel-0, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knc.dev/v1alpha1, kind: JetStreamChannel}}
- apiVersion: messaging.knative.dev/v1
  kind: Channel
  metadata: {name: par-kn-parallel-1, namespace: ns}
  spec: {channelTemplate: {apiVersion: messaging.knc.dev/v1alpha1, kind: JetStreamChannel}}
subscriptions:
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: par-kn-parallel-filter-0, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: par-kn-parallel}
    subscriber: {uri: "http://filter.example/"}
    reply: {ref: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: par-kn-parallel-0, namespace: ns}}
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: par-kn-parallel-filter-1, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: par-kn-parallel}
    subscriber: {ref: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: par-kn-parallel-1, namespace: ns}}
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: par-kn-parallel-0, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: par-kn-parallel-0}
    subscriber: {uri: "http://sub0.example/"}
    reply: {uri: "http://reply0.example/"}
    delivery: {retry: 1}
- apiVersion: messaging.knative.dev/v1
  kind: Subscription
  metadata: {name: par-kn-parallel-1, namespace: ns}
  spec:
    channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: par-kn-parallel-1}
    subscriber: {ref: {apiVersion: v1, kind: Service, name: sub1, namespace: ns}}
    reply: {uri: "http://reply.example/"}
`,
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var tm model.TypeMeta
			if err := yaml.Unmarshal([]byte(tt.in), &tm); err != nil {
				t.Fatal(err)
			}
			o := model.New(tm.APIVersion, tm.Kind)
			if err := yaml.UnmarshalStrict([]byte(tt.in), o); err != nil {
				t.Fatal(err)
			}
			got, ok := flows.Of(o)
			if !ok {
				t.Fatalf("flows.Of(%s) = false, want a Sequence or Parallel", tm.Kind)
			}
			var want flows.Generated
			if err := yaml.UnmarshalStrict([]byte(tt.want), &want); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("generated objects (-want +got):\n%s", diff)
			}
		})
	}
}

func TestIngressChannel(t *testing.T) {
	seq := &model.Sequence{Metadata: model.ObjectMeta{Name: "s"}}
	par := &model.Parallel{Metadata: model.ObjectMeta{Name: "p"}}
	for _, tt := range []struct {
		o    model.Object
		want string
	}{{seq, "s-kn-sequence-0"}, {par, "p-kn-parallel"}} {
		got, ok := flows.IngressChannel(tt.o)
		if !ok || got != tt.want {
			t.Errorf("IngressChannel(%T) = %q, %v; want %q, true", tt.o, got, ok, tt.want)
		}
	}
	if _, ok := flows.IngressChannel(&model.Channel{}); ok {
		t.Error("IngressChannel(Channel) = true, want false")
	}
}

// A name the flows stage would give a Channel or Subscription that the
// repository already uses is an error at the flow's metadata.name, and
// stops the pipeline there.
func TestExpandRefusesATakenName(t *testing.T) {
	dir := t.TempDir()
	manifests := `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: s, namespace: ns}
spec:
  steps:
  - uri: http://one.example/
---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata: {name: s-kn-sequence-0, namespace: ns}
`
	if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(manifests), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stopped != compiler.StageFlows {
		t.Errorf("stopped at %q, want %q", res.Stopped, compiler.StageFlows)
	}
	var got []string
	for _, d := range res.Diagnostics {
		got = append(got, d.String())
	}
	want := []string{"m.yaml:3:18: metadata.name: Sequence.flows.knative.dev ns/s compiles into Channel ns/s-kn-sequence-0, which is also defined at m.yaml:8:1: rename one of them"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics (-want +got):\n%s", diff)
	}
}

// TestExpandTakesBackWhatBuildWrote: knc build writes a flow's Channels
// and Subscriptions with the hash of their spec in knc.dev/spec-hash, and
// its output read back (knc validate of the output, in CI) holds both the
// flow and them. An object so annotated, whose spec is the one the flow
// makes, is the flow's; one whose spec differs is still a taken name.
func TestExpandTakesBackWhatBuildWrote(t *testing.T) {
	const sequence = `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata: {name: s, namespace: ns}
spec:
  steps:
  - uri: http://one.example/
`
	load := func(manifests string) *compiler.Result {
		t.Helper()
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "m.yaml"), []byte(manifests), 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := compiler.Load(compiler.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	res := load(sequence)
	if !res.Valid() {
		t.Fatal(res.Diagnostics)
	}
	g := flows.Sequence(res.Units[0].Set.Sequences[0])
	hash := model.SpecHash(model.Spec(g.Channels[0]))
	channel := func(spec string) string {
		return "---\napiVersion: messaging.knative.dev/v1\nkind: Channel\nmetadata:\n  name: s-kn-sequence-0\n  namespace: ns\n  annotations: {knc.dev/spec-hash: \"" + hash + "\"}\n" + spec
	}

	res = load(sequence + channel(""))
	if !res.Valid() {
		t.Fatalf("the flow's own Channel, as built, is refused: %v", res.Diagnostics)
	}
	e := res.Units[0].Set.Index[model.KeyOf(g.Channels[0])]
	if e == nil || !e.Generated() {
		t.Errorf("the built Channel is not taken as the Sequence's: %+v", e)
	}

	res = load(sequence + channel("spec: {delivery: {retry: 1}}\n"))
	if res.Stopped != compiler.StageFlows {
		t.Errorf("a Channel whose spec is not the flow's, annotated as built: stopped at %q, want %q", res.Stopped, compiler.StageFlows)
	}
}
