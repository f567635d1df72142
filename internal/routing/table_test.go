package routing

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sampleTable() *Table {
	return &Table{
		Brokers: []Broker{{
			Source: Source{Namespace: "default", Name: "default", SpecHash: "abc"},
			Path:   BrokerPath("default", "default"),
			Delivery: &Delivery{Retry: 3, BackoffPolicy: BackoffExponential, BackoffDelay: Duration(200 * time.Millisecond),
				DeadLetterSink: &Destination{URI: "http://dls.default.svc.cluster.local/"}},
			Triggers: []Trigger{{
				Source:           Source{Namespace: "default", Name: "t1"},
				Filters:          []Filter{{Exact: map[string]string{"type": "a"}}, {Not: &Filter{CESQL: "source LIKE 'x%'"}}},
				Subscriber:       Destination{Ref: &Ref{APIVersion: "serving.knative.dev/v1", Kind: "Service", Namespace: "default", Name: "svc"}, URI: "/path"},
				KeepDeadLettered: true,
			}},
		}},
		Channels: []Channel{{
			Source:        Source{Namespace: "default", Name: "default"},
			Path:          ChannelPath("default", "default"),
			Subscriptions: []Subscription{{Source: Source{Namespace: "default", Name: "s"}, Reply: &Destination{URI: "http://r.example/"}, KeepDeadLettered: true}},
		}},
		PingSources: []PingSource{{
			Source: Source{Namespace: "default", Name: "ping"}, Schedule: "*/2 * * * *", Timezone: "Europe/Paris",
			ContentType: "text/plain", DataBase64: "aGVsbG8=", Extensions: map[string]string{"team": "a"},
			Sink: Destination{URI: "http://knc-ingress.default.svc.cluster.local/brokers/default/default"}, SinkPath: BrokerPath("default", "default"),
		}},
		Sources: []EventSource{{
			Source: Source{Namespace: "default", Name: "pods"}, APIVersion: "sources.knative.dev/v1", Kind: "ApiServerSource",
			Extensions: map[string]string{"team": "a"},
			Sink:       Destination{URI: "http://knc-ingress.default.svc.cluster.local/channels/default/default"}, SinkPath: ChannelPath("default", "default"),
		}},
		Sequences: []Sequence{{Source: Source{Namespace: "default", Name: "seq"}, Channels: []string{"seq-kn-sequence-0"}, Subscriptions: []string{"seq-kn-sequence-0"}}},
		Parallels: []Parallel{{Source: Source{Namespace: "default", Name: "par"}, Channel: "par-kn-parallel",
			Branches: []Branch{{Channel: "par-kn-parallel-0", FilterSubscription: "par-kn-parallel-filter-0", Subscription: "par-kn-parallel-0"}}}},
	}
}

func TestEncodeDecodeRoundTrip(t *testing.T) {
	want := sampleTable()
	b, err := Encode(want)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	want.APIVersion, want.Kind = APIVersion, Kind
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("round trip (-want +got):\n%s", d)
	}
	again, err := Encode(got)
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(b) {
		t.Errorf("encoding is not stable:\n%s\n---\n%s", b, again)
	}
	if n := strings.Count(string(b), `"keepDeadLettered": true`); n != 2 {
		t.Errorf("keepDeadLettered is written %d times, want 2 (a Trigger and a Subscription):\n%s", n, b)
	}
	if !strings.Contains(string(b), `"backoffDelay": "200ms"`) {
		t.Errorf("durations should encode as Go duration strings:\n%s", b)
	}
}

func TestDecodeRejects(t *testing.T) {
	valid, err := Encode(sampleTable())
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		mutate  func(string) string
		wantErr string
	}{
		{"wrong version", func(s string) string { return strings.Replace(s, APIVersion, "routing.knc.dev/v9", 1) }, `got apiVersion "routing.knc.dev/v9"`},
		{"unknown field", func(s string) string { return strings.Replace(s, `"path"`, `"bogus": 1, "path"`, 1) }, `unknown field "bogus"`},
		{"relative uri without ref", func(s string) string {
			return strings.Replace(s, "http://dls.default.svc.cluster.local/", "/relative", 1)
		}, `deadLetterSink: uri "/relative" must be absolute`},
		{"two dialects", func(s string) string { return strings.Replace(s, `"exact": {`, `"cesql": "true", "exact": {`, 1) }, "filters[0]: exactly one dialect must be set, found 2"},
		{"bad policy", func(s string) string { return strings.Replace(s, `"exponential"`, `"random"`, 1) }, `unknown backoffPolicy "random"`},
		{"bad duration", func(s string) string { return strings.Replace(s, `"200ms"`, `"PT0.2S"`, 1) }, `duration "PT0.2S"`},
		{"pingsource sink path unknown", func(s string) string {
			return strings.Replace(s, `"sinkPath": "/brokers/default/default"`, `"sinkPath": "/brokers/default/other"`, 1)
		}, `pingsource default/ping: sinkPath "/brokers/default/other" is no Broker or Channel of the table`},
		{"pingsource without schedule", func(s string) string { return strings.Replace(s, `"schedule": "*/2 * * * *"`, `"schedule": ""`, 1) }, "pingsource default/ping: schedule is required"},
		{"pingsource bad base64", func(s string) string { return strings.Replace(s, `"aGVsbG8="`, `"!!"`, 1) }, "pingsource default/ping: dataBase64"},
		{"source sink path unknown", func(s string) string {
			return strings.Replace(s, `"sinkPath": "/channels/default/default"`, `"sinkPath": "/channels/default/other"`, 1)
		}, `source ApiServerSource/default/pods: sinkPath "/channels/default/other" is no Broker or Channel of the table`},
		{"source without kind", func(s string) string { return strings.Replace(s, `"kind": "ApiServerSource"`, `"kind": ""`, 1) }, "source /default/pods: apiVersion and kind are required"},
		{"source without sink", func(s string) string {
			return strings.Replace(s, `"uri": "http://knc-ingress.default.svc.cluster.local/channels/default/default"`, `"uri": ""`, 1)
		}, `source ApiServerSource/default/pods: sink: uri "" must be absolute`},
		{"duplicate path", func(s string) string {
			return strings.Replace(s, "/channels/default/default", "/brokers/default/default", 1)
		}, `is already served by broker default/default`},
		{"sequence without its subscriptions", func(s string) string {
			return strings.Replace(s, `"subscriptions": [
        "seq-kn-sequence-0"
      ]`, `"subscriptions": []`, 1)
		}, "sequence default/seq: needs one channel and one subscription per step"},
		{"parallel branch without its filter subscription", func(s string) string {
			return strings.Replace(s, `"par-kn-parallel-filter-0"`, `""`, 1)
		}, "parallel default/par: branches[0]: needs its channel, filter subscription and subscription"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode([]byte(tt.mutate(string(valid))))
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Decode error = %v, want it to contain %q", err, tt.wantErr)
			}
		})
	}
}
