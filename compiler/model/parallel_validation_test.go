package model

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A branch's retry beyond 32 bits fails Knative's decoding: that is one
// error, not the error and a warning about the same value.
func TestParallelBranchRetryOutOfRangeIsOneError(t *testing.T) {
	retry := int64(3_000_000_000)
	subscriber := "https://big.example.com/"
	p := &Parallel{
		TypeMeta: TypeMeta{APIVersion: FlowsV1, Kind: "Parallel"},
		Metadata: ObjectMeta{Name: "fan", Namespace: "default"},
		Spec: ParallelSpec{Branches: []ParallelBranch{{
			Subscriber: &Destination{URI: &subscriber},
			Delivery:   &DeliverySpec{Retry: &retry},
		}}},
	}
	var got FieldErrors
	for _, e := range p.Validate(Features{}, "default") {
		if e.Path == "spec.branches[0].delivery.retry" {
			got = append(got, e)
		}
	}
	want := FieldErrors{{
		Path:    "spec.branches[0].delivery.retry",
		Message: "3000000000 is out of the range of a 32-bit integer, which Knative decodes retry as",
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diagnostics at the retry (-want +got):\n%s", diff)
	}
}
