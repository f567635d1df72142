package check

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/txtar"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
)

// TestKnativeAdmissionCorpus holds knc's verdict on every case of
// testdata/knative, derived from Knative's validation test tables and the
// examples of its documentation, to Knative's: an error refuses the object,
// a warning or nothing admits it. The archive comment names the upstream
// file and each case is named after the upstream case.
func TestKnativeAdmissionCorpus(t *testing.T) {
	runCorpus(t, "testdata/knative")
}

// TestEdgeCaseCorpus does the same for cases written for knc, not derived
// from Knative's tables; their verdicts follow from Knative's validation
// code.
func TestEdgeCaseCorpus(t *testing.T) {
	runCorpus(t, "testdata/edge")
}

func runCorpus(t *testing.T, dir string) {
	archives, err := filepath.Glob(filepath.Join(dir, "*.txtar"))
	if err != nil {
		t.Fatal(err)
	}
	if len(archives) == 0 {
		t.Fatalf("no archives in %s", dir)
	}
	cases, disagreements, admitted := 0, 0, 0
	for _, archive := range archives {
		a, err := txtar.ParseFile(archive)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(a.Comment), "knative/") && dir == "testdata/knative" {
			t.Errorf("%s: the comment must name the upstream repository and path", archive)
		}
		for _, f := range a.Files {
			cases++
			want, features := caseHeader(t, archive, f)
			if want == "admit" {
				admitted++
			}
			t.Run(filepath.Base(archive)+"/"+f.Name, func(t *testing.T) {
				errs, warnings := judge(t, f.Data, features)
				got := "admit"
				if len(errs) > 0 {
					got = "refuse"
				}
				if got != want {
					disagreements++
					t.Errorf("Knative would %s it, knc would %s it\nerrors:   %v\nwarnings: %v\n%s", want, got, errs, warnings, f.Data)
				}
			})
		}
	}
	t.Logf("%s: %d cases, %d admitted by Knative, %d disagreements", dir, cases, admitted, disagreements)
	if admitted == 0 || admitted == cases {
		t.Errorf("a corpus needs both verdicts: %d of %d admitted", admitted, cases)
	}
}

// caseHeader reads "# knative: admit|refuse" and an optional
// "# features: name=enabled,name=disabled" from the top of a case.
func caseHeader(t *testing.T, archive string, f txtar.File) (string, model.Features) {
	features := project.Default().EnabledFeatures()
	want := ""
	for _, line := range strings.Split(string(f.Data), "\n") {
		rest, ok := strings.CutPrefix(line, "# ")
		if !ok {
			break
		}
		if v, ok := strings.CutPrefix(rest, "knative: "); ok {
			want = v
		}
		if v, ok := strings.CutPrefix(rest, "features: "); ok {
			for _, kv := range strings.Split(v, ",") {
				name, state, _ := strings.Cut(kv, "=")
				features[name] = state == "enabled"
			}
		}
	}
	if want != "admit" && want != "refuse" {
		t.Fatalf("%s: %s: first line must be '# knative: admit' or '# knative: refuse'", archive, f.Name)
	}
	return want, features
}

// judge runs the checks of one object, as admission sees it: every document
// on its own, without the repository-wide checks of references and loops.
func judge(t *testing.T, src []byte, features model.Features) (errs, warnings []string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "object.yaml")
	if err := os.WriteFile(file, src, 0o644); err != nil {
		t.Fatal(err)
	}
	docs, diags, err := load.LoadFiles([]string{file})
	if err != nil {
		t.Fatal(err)
	}
	c := &checker{features: features, defaults: model.Defaults{Namespace: "default"}}
	for _, doc := range docs {
		_, d := c.object(doc)
		diags = append(diags, d...)
	}
	for _, d := range diags {
		if d.Severity == diag.Warning {
			warnings = append(warnings, d.String())
		} else {
			errs = append(errs, d.String())
		}
	}
	return errs, warnings
}
