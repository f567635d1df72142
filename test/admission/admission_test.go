// Package admission holds knc's verdict on generated manifests to Knative's
// own admission code: the koracle command, built from Knative Eventing,
// judges the same files. Every disagreement is written as a reproducer.
package admission

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/admissionfuzz"
)

var (
	inputs       = flag.Int("admission.n", 300, "how many generated inputs of the four core kinds to judge")
	sourceInputs = flag.Int("admission.sources.n", 300, "how many generated inputs of the sources and flows to judge")
	seed         = flag.Uint64("admission.seed", 1, "the generator's seed")
	rounds       = flag.Int("admission.shrink", 30, "how many rounds to shrink the disagreements by")
	out          = flag.String("admission.out", "", "directory to write the reproducers of disagreements to (default: a temporary one)")
)

// sharedDir finds the shared tools: $KNC_SHARED_DIR, or ../shared beside
// the module root. The test skips without them, except under CI=true.
func sharedDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("KNC_SHARED_DIR")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		for d := wd; ; d = filepath.Dir(d) {
			if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
				dir = filepath.Join(filepath.Dir(d), "shared")
				break
			}
			if filepath.Dir(d) == d {
				break
			}
		}
	}
	bin := filepath.Join(dir, "tools", "koracle", "bin", "koracle")
	if _, err := os.Stat(bin); err != nil {
		msg := fmt.Sprintf("Knative's admission oracle is not there (%v): set KNC_SHARED_DIR to the directory holding tools/koracle", err)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return dir
}

func campaign(t *testing.T) *admissionfuzz.Campaign {
	shared := sharedDir(t)
	dir := t.TempDir()
	config := filepath.Join(dir, "knc.yaml")
	if err := os.WriteFile(config, []byte("apiVersion: config.knc.dev/v1alpha1\nkind: Config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &admissionfuzz.Campaign{
		Oracle: admissionfuzz.Oracle{
			Bin:     filepath.Join(shared, "tools", "koracle", "bin", "koracle"),
			Configs: filepath.Join(shared, "tools", "koracle", "configs"),
		},
		Judge: func(file string) admissionfuzz.Verdict { return judge(config, file) },
		Dir:   dir,
		Allow: allowed,
	}
}

// judge is knc validate's verdict on one file, with references taken as
// resolved: Knative's admission does not look them up, so that knc's
// check of them would decide every case that renames a reference.
func judge(config, file string) (v admissionfuzz.Verdict) {
	defer func() {
		if r := recover(); r != nil {
			v = admissionfuzz.Verdict{Refused: true, Crashed: true, Reason: fmt.Sprintf("panic: %v\n%s", r, debug.Stack())}
		}
	}()
	res, err := compiler.Load(compiler.Options{Paths: []string{file}, ConfigFile: config})
	if err != nil {
		return admissionfuzz.Verdict{Refused: true, Reason: err.Error()}
	}
	// The reason leaves out the file and position, so that shrinking a
	// case can tell that it is still refused for the same reasons.
	var reasons []string
	for _, d := range res.Diagnostics {
		if d.Severity == diag.Warning || unresolved(d) {
			continue
		}
		reasons = append(reasons, d.Path+": "+d.Message)
	}
	if len(reasons) == 0 {
		return admissionfuzz.Verdict{}
	}
	return admissionfuzz.Verdict{Refused: true, Reason: strings.Join(reasons, " | ")}
}

func unresolved(d diag.Diagnostic) bool {
	return strings.Contains(d.Message, "not found in namespace") && strings.Contains(d.Message, "declare it under external")
}

// allowed are the deliberate differences docs/validation.md lists.
var allowed = []admissionfuzz.Allowance{
	{
		Name:   "not-a-knative-kind",
		Reason: "an object of an API group knc does not know is loaded as a reference target, with a warning; the API server refuses a group it does not serve",
		Match: func(o admissionfuzz.Outcome) bool {
			return !o.Knc.Refused && o.Knative.Reason == admissionfuzz.NotJudged
		},
	},
	{
		Name:   "api-server-field-validation",
		Reason: "the API server's field validation (kubectl's default, --validate=strict) refuses a field its schema lacks, such as Spec for spec or an unknown field under metadata, and a field given twice; Knative's webhook, which the oracle runs alone, decodes field names case-insensitively, keeps the last of two, and never sees metadata's unknown fields",
		Match: func(o admissionfuzz.Outcome) bool {
			if !o.Knc.Refused || o.Knative.Refused {
				return false
			}
			// A field the schema lacks leaves the one meant absent,
			// so that other errors follow from it.
			for _, p := range []string{"unknown field", "duplicate key", "apiVersion and kind are required"} {
				if strings.Contains(o.Knc.Reason, p) {
					return true
				}
			}
			return false
		},
	},
	{
		Name:   "crd-schema-object",
		Reason: "the CRDs of Sequence and Parallel type spec.channelTemplate.spec as an object, so the API server refuses another value before the webhook sees it; the oracle runs the webhook alone, whose type for it takes any JSON",
		Match: func(o admissionfuzz.Outcome) bool {
			return o.Knc.Refused && !o.Knative.Refused && (o.Case.Kind == "Sequence" || o.Case.Kind == "Parallel") &&
				strings.Contains(o.Knc.Reason, "spec.channelTemplate.spec: must be an object")
		},
	},
	{
		Name:   "integer-beyond-64-bits",
		Reason: "an integer beyond 64 bits in a field of free content (a channel template's spec) is refused with the fix of quoting it: the API server would store it as a float, which is not what was written",
		Match: func(o admissionfuzz.Outcome) bool {
			return o.Knc.Refused && !o.Knative.Refused && strings.Contains(o.Knc.Reason, "Kubernetes integers are 64-bit")
		},
	},
	{
		Name:   "knc-annotation",
		Reason: "knc.dev/keep-dead-lettered, which knc's runtime reads and Knative does not, is \"true\" or \"false\"",
		Match: func(o admissionfuzz.Outcome) bool {
			return o.Knc.Refused && !o.Knative.Refused && strings.Contains(o.Knc.Reason, model.KeepDeadLetteredAnnotation)
		},
	},
	{
		Name:   "generateName-without-name",
		Reason: "kubectl apply and Flux's server-side apply refuse an object without metadata.name",
		Match: func(o admissionfuzz.Outcome) bool {
			return o.Knc.Refused && !o.Knative.Refused && strings.Contains(o.Knc.Reason, "metadata.name")
		},
	},
}

func TestSeedsAreAdmittedByBoth(t *testing.T) {
	seedsAdmitted(t, admissionfuzz.NewGenerator(0), admissionfuzz.Seeds)
}

func TestSourceSeedsAreAdmittedByBoth(t *testing.T) {
	seedsAdmitted(t, admissionfuzz.NewSourceGenerator(0), admissionfuzz.SourceSeeds)
}

func seedsAdmitted(t *testing.T, g *admissionfuzz.Generator, seeds []admissionfuzz.Seed) {
	c := campaign(t)
	var cases []*admissionfuzz.Case
	for _, s := range seeds {
		cases = append(cases, g.Seed(s.Name))
	}
	outs, err := c.Run(cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range outs {
		if o.Knc.Refused || o.Knative.Refused {
			t.Errorf("seed %s: knc would %s it (%s), Knative would %s it (%s)\n%s", o.Case.Base, o.Knc, o.Knc.Reason, o.Knative, o.Knative.Reason, o.Case.YAML())
		}
	}
}

// TestKnativeAdmissionDifferential generates -admission.n inputs from
// -admission.seed and fails on every disagreement no deliberate difference
// explains, writing each as a shrunk reproducer.
func TestKnativeAdmissionDifferential(t *testing.T) {
	differential(t, admissionfuzz.NewGenerator(*seed), *inputs)
}

// TestSourcesAdmissionDifferential does the same for the sources and flows
// (PingSource, ApiServerSource, ContainerSource, SinkBinding, Sequence,
// Parallel), -admission.sources.n inputs.
func TestSourcesAdmissionDifferential(t *testing.T) {
	differential(t, admissionfuzz.NewSourceGenerator(*seed), *sourceInputs)
}

func differential(t *testing.T, g *admissionfuzz.Generator, inputs int) {
	c := campaign(t)
	const batch = 2000
	var all, disagreements []admissionfuzz.Outcome
	for start := 0; start < inputs; start += batch {
		var cases []*admissionfuzz.Case
		for i := start; i < min(start+batch, inputs); i++ {
			cases = append(cases, g.Case(i))
		}
		outs, err := c.Run(cases)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, outs...)
	}
	for _, o := range all {
		if o.Disagrees() && o.Allowed == "" {
			disagreements = append(disagreements, o)
		}
	}
	tally := admissionfuzz.Count(all)
	var report strings.Builder
	fmt.Fprintf(&report, "seed %d, %d inputs\n", *seed, len(all))
	tally.Print(&report)
	t.Log("\n" + report.String())

	if share := tally.RefusedShare(); share < 0.25 || share > 0.75 {
		t.Errorf("Knative refuses %.1f%% of the inputs; the generator must keep it between 25%% and 75%%", 100*share)
	}
	if len(disagreements) == 0 {
		return
	}
	shrunk, err := c.Shrink(disagreements, *rounds)
	if err != nil {
		t.Fatal(err)
	}
	dir := *out
	if dir == "" {
		dir = t.TempDir()
	}
	files, err := admissionfuzz.WriteReproducers(dir, shrunk)
	if err != nil {
		t.Fatal(err)
	}
	var msg strings.Builder
	for i, o := range shrunk {
		if i < 20 {
			fmt.Fprintf(&msg, "--- %s\n%s", filepath.Base(files[i]), admissionfuzz.Reproducer(o))
		}
	}
	t.Errorf("%d disagreements with Knative's admission (reproducers in %s):\n%s", len(shrunk), dir, msg.String())
}
