package examples_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/cmd/knc/routetest"
	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/policy"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/inputfs"
)

// TestRouteTestsPass runs every example's route test files, as knc test
// does: the same compile, the runtime's matcher.
func TestRouteTestsPass(t *testing.T) {
	ran := 0
	for _, name := range examples {
		t.Run(name, func(t *testing.T) {
			dir, err := filepath.Abs(name)
			if err != nil {
				t.Fatal(err)
			}
			names, err := routetest.Find([]string{dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(names) == 0 {
				t.Skipf("%s has no route test files", name)
			}
			res, err := compiler.Load(compiler.Options{Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid() {
				t.Fatalf("%s is invalid:\n%v", name, res.Diagnostics)
			}
			var units []routetest.Unit
			for _, u := range res.Units {
				table, diags := routes.Compile(u.Set, res.Config)
				if len(diags) > 0 {
					t.Fatal(diags)
				}
				units = append(units, routetest.Unit{Name: u.Name(), Table: table})
			}
			var files []*routetest.File
			for _, n := range names {
				src, err := os.ReadFile(n)
				if err != nil {
					t.Fatal(err)
				}
				f, diags := routetest.Parse(n, src, false)
				if len(diags) > 0 {
					t.Fatal(diags)
				}
				files = append(files, f)
			}
			for _, r := range routetest.Run(files, units) {
				ran++
				if !r.Passed() {
					t.Errorf("%s:%d: case %s: %s\n%s", r.File.Path, r.Case.Pos.Line, r.Case.Name, strings.Join(r.Failures, "; "), strings.Join(r.Explanations, "\n"))
				}
			}
		})
	}
	if ran == 0 {
		t.Error("no example has route test cases")
	}
}

// TestPolicyExample checks the policies example against its own policies,
// then a copy of it that breaks each policy once.
func TestPolicyExample(t *testing.T) {
	dir, err := filepath.Abs("policies")
	if err != nil {
		t.Fatal(err)
	}
	check := func(t *testing.T, dir string) []string {
		t.Helper()
		res, err := compiler.Load(compiler.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if !res.Valid() {
			t.Fatalf("invalid:\n%v", res.Diagnostics)
		}
		files, err := policy.Files(inputfs.Disk, dir, []string{filepath.Join(dir, policy.Dir)})
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Fatal("no policy files")
		}
		set, diags, err := policy.Load(inputfs.Disk, files, policy.DefaultLimits)
		if err != nil || len(diags) > 0 {
			t.Fatalf("policies: %v %v", err, diags)
		}
		var got []string
		for _, u := range res.Units {
			found, err := set.Check(u.Set.Entries, policy.DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range found.Relative(dir) {
				got = append(got, d.String())
			}
		}
		return got
	}
	if got := check(t, dir); len(got) > 0 {
		t.Fatalf("the example breaks its own policies:\n%s", strings.Join(got, "\n"))
	}

	broken := t.TempDir()
	if err := os.CopyFS(broken, os.DirFS(dir)); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(broken, "broken.yaml"), []byte(`apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: webhook
  namespace: shop-prod
spec:
  broker: default
  subscriber:
    uri: https://hooks.example.com/orders
  delivery:
    retry: 50
`), 0o644); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"broken.yaml:9:10: spec.subscriber.uri: policy in-cluster-subscribers: subscribers run in the cluster: use a ref (with a relative URI if need be), or a URI of a Service (http://NAME.NAMESPACE.svc.cluster.local/) (invalid value \"https://hooks.example.com/orders\" (out of bound =~\"^(https?://[a-z0-9]([-a-z0-9]*[a-z0-9])?\\\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?\\\\.svc(\\\\.cluster\\\\.local)?(:[0-9]+)?(/.*)?|[^:]*)$\"))",
		"broken.yaml:10:3: spec.delivery.deadLetterSink: policy prod-dead-letter: every Trigger in a production namespace (*-prod) needs spec.delivery.deadLetterSink, so that events it cannot deliver are kept (not set)",
		"broken.yaml:11:12: spec.delivery.retry: policy retry-limit: spec.delivery.retry is at most 10; send what still fails to a dead-letter sink (invalid value 50 (out of bound <=10))",
	}
	if diff := cmp.Diff(want, check(t, broken)); diff != "" {
		t.Errorf("violations (-want +got):\n%s", diff)
	}
}
