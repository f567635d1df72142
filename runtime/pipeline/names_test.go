package pipeline

import (
	"strings"
	"testing"

	"github.com/knc-dev/knc/internal/routing"
)

func TestToken(t *testing.T) {
	tests := []struct {
		namespace, name, want string
	}{
		{"default", "default", "default_default"},
		{"team-a", "orders.v1", "team-a_orders_v1"},
		// Not a Kubernetes name: hashed, so it cannot break a subject.
		{"ns", "a b>*", "X"},
		{"NS", "b", "X"},
		{"ns", strings.Repeat("n", 120), "X"},
	}
	for _, tt := range tests {
		got := token(routing.Source{Namespace: tt.namespace, Name: tt.name})
		if tt.want == "X" {
			if !strings.HasPrefix(got, "X") || len(got) != 25 || strings.ContainsAny(got, ". *>") {
				t.Errorf("token(%q, %q) = %q, want a hash token", tt.namespace, tt.name, got)
			}
			continue
		}
		if got != tt.want {
			t.Errorf("token(%q, %q) = %q, want %q", tt.namespace, tt.name, got, tt.want)
		}
	}
	// Different objects never share a token.
	seen := map[string]routing.Source{}
	for _, o := range []routing.Source{
		{Namespace: "a", Name: "b.c"}, {Namespace: "a", Name: "b-c"}, {Namespace: "a-b", Name: "c"},
		{Namespace: "a", Name: "b_c"}, {Namespace: "ab", Name: "c"},
	} {
		tok := token(o)
		if prev, ok := seen[tok]; ok {
			t.Errorf("%v and %v share token %q", prev, o, tok)
		}
		seen[tok] = o
	}
}

func TestSubjects(t *testing.T) {
	n := NamesFor(KindChannel, routing.Source{Namespace: "ns", Name: "c"})
	if n.In != "knc.channel.ns_c.in" || n.InStream != "knc_channel_ns_c_in" || n.OutStream != "knc_channel_ns_c_out" {
		t.Errorf("names = %+v", n)
	}
	subject := n.Subject(StageHoldDead, "ns_s")
	stage, target, ok := n.ParseSubject(subject)
	if !ok || stage != StageHoldDead || target != "ns_s" {
		t.Errorf("parseSubject(%q) = %q, %q, %v", subject, stage, target, ok)
	}
	if activeStage(holdStage(StageDead)) != StageDead || activeStage(holdStage(StageSend)) != StageSend {
		t.Error("hold and active stages do not round-trip")
	}
}
