package cluster

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/knc-dev/knc/internal/benchcorpus"
)

// TestSpecHashAgreesWithCompiler checks, on a generated corpus of every
// kind and many filters and delivery options, that the runtime hashes a
// spec as knc build wrote it exactly as the compiler hashed it. (TestExamples
// checks the same after a round trip through the API server.)
func TestSpecHashAgreesWithCompiler(t *testing.T) {
	dir := t.TempDir()
	if err := benchcorpus.WriteByKind(dir, benchcorpus.Shape{Objects: 250, Namespaces: 3}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "knc.yaml"), []byte("apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: team-0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, objs := build(t, dir)
	n := 0
	for _, o := range knative(objs) {
		// As a client decodes it from the API server's JSON.
		b, err := json.Marshal(o.Object)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.Unstructured{}
		if err := u.UnmarshalJSON(b); err != nil {
			t.Fatal(err)
		}
		checkSpecHash(t, u)
		n++
	}
	if n < 250 {
		t.Errorf("checked %d objects, want at least 250", n)
	}
}
