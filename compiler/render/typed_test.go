package render_test

import (
	"bytes"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/benchcorpus"
)

// TestTypedMatchesGeneric writes every Trigger and Subscription of a
// generated corpus and of the examples both ways and expects the same
// bytes.
func TestTypedMatchesGeneric(t *testing.T) {
	corpus := t.TempDir()
	if err := benchcorpus.WriteByKind(corpus, benchcorpus.Shape{Objects: 500, Namespaces: 3}); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, dir := range []string{corpus, "../../examples/quickstart", "../../examples/multi-namespace", "../../golden"} {
		res, err := compiler.Load(compiler.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range res.Set.Entries {
			var typed any
			switch o := e.Object.(type) {
			case *model.Trigger:
				typed = render.CleanTrigger(o, "")
			case *model.Subscription:
				typed = render.CleanSubscription(o, "")
			default:
				continue
			}
			generic, err := render.Normalise(e.Object, "")
			if err != nil {
				t.Fatal(err)
			}
			var want, got bytes.Buffer
			if err := render.EncodeYAML(&want, generic); err != nil {
				t.Fatal(err)
			}
			if err := render.EncodeTyped(&got, typed); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want.String(), got.String()); diff != "" {
				t.Errorf("%s (-generic +typed):\n%s", e.Key, diff)
			}
			checked++
		}
	}
	if checked < 400 {
		t.Errorf("checked only %d objects", checked)
	}
}
