package golden_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/knc-dev/knc/compiler"
)

// TestExamplePolicyAgreesWithKnative holds the shipped example policy
// in-cluster-subscribers (examples/policies/.knc/policies/network.cue) to
// what Knative admits and the docs use: a subscriber that is a reference
// with a URI relative to it stays in the cluster, and an absolute URI
// outside the cluster is refused.
func TestExamplePolicyAgreesWithKnative(t *testing.T) {
	tests := []struct {
		name       string
		subscriber string
		refused    bool
	}{
		{"a reference", "ref: {apiVersion: v1, kind: Service, name: billing}", false},
		{"a reference and a relative URI", "ref: {apiVersion: v1, kind: Service, name: billing}\n    uri: /email", false},
		{"a cluster-local Service URI", "uri: http://billing.shop-prod.svc.cluster.local/email", false},
		{"a URI outside the cluster", "uri: https://hooks.example.com/email", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.CopyFS(dir, os.DirFS(filepath.Join("..", "examples", "policies"))); err != nil {
				t.Fatal(err)
			}
			trigger := "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata:\n  name: extra\n  namespace: shop-prod\nspec:\n  broker: default\n  subscriber:\n    " + tt.subscriber + "\n"
			if err := os.WriteFile(filepath.Join(dir, "extra.yaml"), []byte(trigger), 0o644); err != nil {
				t.Fatal(err)
			}
			// The pipeline's policies stage finds the project's policies
			// in its .knc/policies.
			res, err := compiler.Build(context.Background(), compiler.Options{Dir: dir, Paths: []string{dir}, Policies: &compiler.Policies{}})
			if err != nil {
				t.Fatal(err)
			}
			var refusal string
			for _, d := range res.Diagnostics {
				if strings.Contains(d.Pos.String(), "extra.yaml") && strings.Contains(d.Message, "subscribers run in the cluster") {
					refusal = d.String()
				}
			}
			if got := refusal != ""; got != tt.refused {
				t.Errorf("refused by in-cluster-subscribers = %v (%q), want %v; all diagnostics:\n%v", got, refusal, tt.refused, res.Diagnostics)
			}
		})
	}
}
