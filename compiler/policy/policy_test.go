package policy

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestMatchSelects(t *testing.T) {
	tests := []struct {
		name                 string
		match                Match
		apiVersion, kind, ns string
		labels               map[string]string
		want                 bool
	}{
		{name: "empty match selects all", kind: "Service", want: true},
		{name: "kind", match: Match{Kinds: []string{"Trigger"}}, kind: "Trigger", want: true},
		{name: "other kind", match: Match{Kinds: []string{"Trigger"}}, kind: "Broker"},
		{name: "one of kinds", match: Match{Kinds: []string{"Broker", "Trigger"}}, kind: "Broker", want: true},
		{name: "namespace pattern", match: Match{Namespaces: []string{"prod-*"}}, ns: "prod-eu", want: true},
		{name: "namespace pattern misses", match: Match{Namespaces: []string{"prod-*"}}, ns: "staging"},
		{name: "apiVersion", match: Match{APIVersions: []string{"eventing.knative.dev/v1"}}, apiVersion: "messaging.knative.dev/v1"},
		{name: "labels", match: Match{Labels: map[string]string{"tier": "gold"}}, labels: map[string]string{"tier": "gold", "x": "y"}, want: true},
		{name: "label value differs", match: Match{Labels: map[string]string{"tier": "gold"}}, labels: map[string]string{"tier": "silver"}},
		{name: "label missing", match: Match{Labels: map[string]string{"tier": "gold"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.match.Selects(tt.apiVersion, tt.kind, tt.ns, tt.labels); got != tt.want {
				t.Errorf("Selects = %t, want %t", got, tt.want)
			}
		})
	}
}

func TestFieldPaths(t *testing.T) {
	got := fieldPaths([]string{"policy", "p", "constrain", "metadata", "labels", `"app.kubernetes.io/owner"`})
	want := []string{"metadata", "metadata.labels", "metadata.labels[app.kubernetes.io/owner]"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fieldPaths (-want +got):\n%s", diff)
	}
	got = fieldPaths([]string{"policy", "p", "constrain", "spec", "filters", "1", "exact"})
	want = []string{"spec", "spec.filters", "spec.filters[1]", "spec.filters[1].exact"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fieldPaths (-want +got):\n%s", diff)
	}
}
