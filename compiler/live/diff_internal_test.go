package live

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func secret(field string, values map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Secret",
		"metadata": map[string]any{"name": "credentials", "namespace": "shop"},
		field:      values,
	}}
}

// TestRedactSecrets: no value of a Secret is left on either side; a value
// that changes says so, one written as stringData compares with the same
// value as the API server stores it in data.
func TestRedactSecrets(t *testing.T) {
	live := secret("data", map[string]any{"password": "aHVudGVyMg==", "user": "YWRtaW4=", "gone": "eA=="})
	built := secret("stringData", map[string]any{"password": "s3cret", "user": "admin", "new": "y"})
	redactSecrets(live, built)
	wantLive := map[string]any{"password": "(redacted)", "user": "(redacted)", "gone": "(redacted)"}
	wantBuilt := map[string]any{"password": "(redacted, changed)", "user": "(redacted)", "new": "(redacted, changed)"}
	if diff := cmp.Diff(wantLive, live.Object["data"]); diff != "" {
		t.Errorf("live data (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantBuilt, built.Object["data"]); diff != "" {
		t.Errorf("built data (-want +got):\n%s", diff)
	}
	if _, ok := built.Object["stringData"]; ok {
		t.Error("stringData left in the built Secret")
	}

	pruned := secret("data", map[string]any{"token": "dG9rZW4="})
	redactSecrets(pruned, nil)
	if diff := cmp.Diff(map[string]any{"token": "(redacted)"}, pruned.Object["data"]); diff != "" {
		t.Errorf("pruned data (-want +got):\n%s", diff)
	}
}

// TestSecretRejection keeps the API server's message, which may quote a
// value, out of what is said of a refused Secret.
func TestSecretRejection(t *testing.T) {
	st := metav1.Status{
		Reason:  metav1.StatusReasonInvalid,
		Message: `Secret "credentials" is invalid: data[password]: Invalid value: "hunter2": not allowed`,
		Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseTypeFieldValueInvalid, Field: "data[password]", Message: `Invalid value: "hunter2"`}}},
	}
	got := secretRejection(st)
	want := "refused (Invalid): data[password]: FieldValueInvalid; the API server's message is not shown, as it may quote the Secret's data"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
