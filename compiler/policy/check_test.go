package policy_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/policy"
	"github.com/knc-dev/knc/internal/inputfs"
)

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
	files, err := policy.Files(inputfs.Disk, dir, []string{policies})
	if err != nil {
		t.Fatal(err)
	}
	set, diags, err := policy.Load(inputfs.Disk, files, policy.DefaultLimits)
	if err != nil || len(diags) > 0 {
		t.Fatalf("Load: %v %v", err, diags)
	}
	var first []string
	for i := range 5 {
		found, err := set.Check(res.Units[0].Set.Entries, policy.DefaultLimits)
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
