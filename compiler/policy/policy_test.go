package policy

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
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

// TestCheckIsDeterministic checks that the parallel workers report the
// same violations, in the same order, as one worker would.
func TestCheckIsDeterministic(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("objects.yaml", `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: a, namespace: prod}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: b, namespace: prod, labels: {owner: team-b}}
---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata: {name: c, namespace: dev}
`)
	policies := filepath.Join(dir, "policies")
	if err := os.Mkdir(policies, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(policies, "owner.cue"), []byte(`policy: owner: {
	match: {kind: "Broker", namespace: "prod"}
	constrain: metadata: labels: owner!: string
	message: "Brokers in prod name their owner"
}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := compiler.Load(compiler.Options{Paths: []string{"objects.yaml"}, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	files, err := Files(dir, []string{policies})
	if err != nil {
		t.Fatal(err)
	}
	set, diags, err := Load(files, DefaultLimits)
	if err != nil || len(diags) > 0 {
		t.Fatalf("Load: %v %v", err, diags)
	}
	var first []string
	for i := range 5 {
		found, err := set.Check(res.Units[0].Set.Entries, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, d := range found {
			got = append(got, d.String())
		}
		if i == 0 {
			first = got
			want := []string{"objects.yaml:3:1: metadata.labels.owner: policy owner: Brokers in prod name their owner (not set)"}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("violations (-want +got):\n%s", diff)
			}
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Errorf("run %d differs from the first (-first +this):\n%s", i, diff)
		}
	}
}
