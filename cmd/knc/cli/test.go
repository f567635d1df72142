package cli

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/knc-dev/knc/cmd/knc/routetest"
	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/internal/safeio"
)

type testFlags struct {
	load   loadFlags
	output string
	update bool
}

func newTestCmd() *cobra.Command {
	var f testFlags
	cmd := &cobra.Command{
		Use:   "test [PATH...]",
		Short: "Check that events reach the Triggers and Subscriptions the test files expect",
		Long: `Test sends the events of route test files through the compiled routing
table, with the matcher the runtime uses, and checks that each reaches
exactly the Triggers of a Broker, or the Subscriptions of a Channel, that
the case expects. No network is used and nothing is started: the table is
what 'knc build' compiles from the same manifests.

A test file is named *.knctest.yaml (anywhere below PATH), or is any YAML
file in .knc/tests beside knc.yaml. It holds a list of cases:

  cases:
  - name: an order reaches billing and the audit log
    broker: shop/default            # or channel: NAMESPACE/NAME
    event:                          # structured mode: attributes and
      type: com.example.order.created   # extensions side by side;
      source: /web                  # id and specversion may be left out,
      region: eu                    # data is optional
    expect: [audit, billing]        # Trigger names, or none
    replies:                        # optional: what a subscriber answers
      billing: {type: com.example.invoice.issued, source: /billing}
    destinations:                   # optional: where it all ends, after
    - http://audit.shop.svc.cluster.local/   # forwards and replies

A Trigger's subscriber that is a Broker or Channel of the manifests
forwards the event there; a Trigger's reply goes back to its Broker, a
Subscription's to its spec.reply. destinations are the subscribers the
event and its replies finally reach: their URLs, or KIND/NAMESPACE/NAME for
a reference the repository cannot resolve.

A case may start at a source instead of a Broker or Channel: with
pingSource: NAMESPACE/NAME and no event, it sends the PingSource's own
event; with source: KIND/NAMESPACE/NAME (an ApiServerSource, a
ContainerSource, a SinkBinding, any source of another project) it sends
the event the case gives, with the source's ceOverrides extensions set.
Either enters at the source's sink.

PATH is a manifest file or directory, as for 'knc validate' (the current
directory by default), and is also searched for test files; a PATH that is
a test file is read as one, and then only the test files given are run.
A case is checked in every deploy unit that holds its Broker or Channel,
so overlays for two clusters are both checked.

Failures are printed as FILE:LINE: case NAME: expected [a, b], got [a],
followed by the filter that decided each difference, as 'knc route'
explains it. With -o json the results are one JSON document; with -o
github, failures are GitHub Actions annotations.

--update writes what each case reaches into its expect (and into its
destinations, when it has them or declares replies), keeping the rest of
the file, comments included (byte for byte when each value to change is on
the line of its key): review the change as a golden file's.

The exit code is 0 when every case passes (or there are no test files), 1
when a case fails or the manifests or test files are invalid, and 2 on a
usage or I/O error.`,
		Example: `  # Run every test file of the project.
  knc test

  # Run one file against the manifests in eventing/.
  knc test eventing/ tests/orders.knctest.yaml

  # Adopt: write what the events reach now, and review the diff.
  knc test --update && git diff

  # Annotate a pull request from GitHub Actions.
  knc test -o github`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "text", "json", "github"); err != nil {
				return err
			}
			return runTest(cmd, &f, args)
		},
	}
	f.load.register(cmd)
	cmd.Flags().StringVarP(&f.output, "output", "o", "text", "output format: text, json or github")
	cmd.Flags().BoolVar(&f.update, "update", false, "write the outcome of every case into its test file")
	return cmd
}

// testArgs splits PATH arguments into manifest paths and test files.
func testArgs(args []string) (manifests, tests []string) {
	for _, a := range args {
		if routetest.IsTestFile(a) || inTestsDir(a) {
			tests = append(tests, a)
			continue
		}
		manifests = append(manifests, a)
	}
	return manifests, tests
}

func inTestsDir(p string) bool {
	return strings.Contains(filepath.ToSlash(filepath.Clean(p)), filepath.ToSlash(routetest.TestsDir)+"/")
}

// findTestFiles lists the test files below the manifest paths and in the
// project's .knc/tests.
func findTestFiles(res *compiler.Result, manifests []string) ([]string, error) {
	dirs := manifests
	if len(dirs) == 0 {
		dirs = []string{"."}
	}
	var walk []string
	for _, d := range dirs {
		if d == compiler.StdinPath {
			continue
		}
		if info, err := os.Stat(d); err == nil && info.IsDir() {
			walk = append(walk, d)
		}
	}
	files, err := routetest.Find(walk)
	if err != nil {
		return nil, err
	}
	if res.Config.File != "" {
		root := filepath.Dir(res.Config.File)
		if wd, err := os.Getwd(); err == nil {
			root = diag.RelPath(wd, root)
		}
		more, err := routetest.FindTestsDir(root)
		if err != nil {
			return nil, err
		}
		files = append(files, more...)
	}
	seen := map[string]bool{}
	var out []string
	for _, f := range files {
		abs, _ := filepath.Abs(f)
		if !seen[abs] {
			seen[abs] = true
			out = append(out, f)
		}
	}
	return out, nil
}

// maxTestFileBytes bounds one test file: thousands of cases fit easily.
const maxTestFileBytes = 16 << 20

func runTest(cmd *cobra.Command, f *testFlags, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	manifests, explicit := testArgs(args)
	res, err := f.load.compile(cmd.Context(), manifests, compiler.Options{Routes: &compiler.RouteOptions{}})
	if err != nil {
		return err
	}
	if !res.Valid() {
		return reportTestFileErrors(stdout, stderr, f.output, res.Diagnostics)
	}
	if f.output == "text" {
		printDiagnostics(stderr, res.Diagnostics)
	}
	names := explicit
	if len(names) == 0 {
		if names, err = findTestFiles(res, manifests); err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
	}
	if len(names) == 0 {
		fmt.Fprintln(stderr, "knc: no test files: name them *.knctest.yaml, or put them in .knc/tests")
		return nil
	}
	files, diags, err := readTestFiles(names, f.update)
	if err != nil {
		return err
	}
	if len(diags) > 0 {
		return reportTestFileErrors(stdout, stderr, f.output, diags)
	}
	units, err := unitTables(stderr, res)
	if err != nil {
		return err
	}
	results := routetest.Run(files, units)
	if f.update {
		return updateTestFiles(stdout, files, results)
	}
	return printTestResults(stdout, f.output, files, results)
}

func readTestFiles(names []string, update bool) ([]*routetest.File, diag.List, error) {
	var files []*routetest.File
	var diags diag.List
	for _, name := range names {
		src, err := safeio.ReadFile(name, maxTestFileBytes)
		if err != nil {
			return nil, nil, &exitError{code: exitTrouble, err: err}
		}
		file, d := routetest.Parse(name, src, update)
		diags = append(diags, d...)
		if file != nil {
			files = append(files, file)
		}
	}
	return files, diags.Sorted(), nil
}

// reportTestFileErrors reports invalid manifests or test files in the
// output format asked for, and fails.
func reportTestFileErrors(stdout, stderr io.Writer, output string, diags diag.List) error {
	switch output {
	case "json":
		if err := writeJSON(stdout, testReport{Passed: false, Cases: []testedCase{}, Errors: validateReport(0, diags).Errors}); err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
	case "github":
		printGitHubAnnotations(stdout, diags)
	default:
		printDiagnostics(stderr, diags)
	}
	return silentExit(exitFailed)
}

// unitTables are the routing tables the pipeline compiled for every
// deploy unit with Knative objects, as knc build would compile them.
func unitTables(stderr io.Writer, res *compiler.Result) ([]routetest.Unit, error) {
	if len(res.Later) > 0 {
		printDiagnostics(stderr, res.Later)
		return nil, silentExit(exitFailed)
	}
	var units []routetest.Unit
	for _, u := range res.Units {
		if u.Knative() == 0 {
			continue
		}
		units = append(units, routetest.Unit{Name: u.Name(), Table: u.Table})
	}
	if len(units) == 1 {
		units[0].Name = ""
	}
	return units, nil
}

// testReport is the JSON form of knc test.
type testReport struct {
	Passed bool            `json:"passed"`
	Cases  []testedCase    `json:"cases"`
	Errors []reportedError `json:"errors,omitempty"`
}

type testedCase struct {
	File         string   `json:"file"`
	Line         int      `json:"line"`
	Name         string   `json:"name"`
	Target       string   `json:"target"`
	Unit         string   `json:"unit,omitempty"`
	Passed       bool     `json:"passed"`
	Expected     []string `json:"expected"`
	Got          []string `json:"got"`
	Destinations []string `json:"destinations,omitempty"`
	Failures     []string `json:"failures,omitempty"`
	Explanations []string `json:"explanations,omitempty"`
}

func caseHeader(r *routetest.Result) string {
	head := fmt.Sprintf("case %s", r.Case.Name)
	if r.Unit != "" {
		head += " (" + r.Unit + ")"
	}
	return head
}

func printTestResults(w io.Writer, output string, files []*routetest.File, results []routetest.Result) error {
	// A case checked in several deploy units counts once, failing when
	// it fails in any.
	cases, failedCases := map[*routetest.Case]bool{}, map[*routetest.Case]bool{}
	for i := range results {
		cases[results[i].Case] = true
		if !results[i].Passed() {
			failedCases[results[i].Case] = true
		}
	}
	failed := len(failedCases)
	var err error
	switch output {
	case "json":
		rep := testReport{Passed: failed == 0, Cases: []testedCase{}}
		for i := range results {
			r := &results[i]
			tc := testedCase{
				File: r.File.Path, Line: r.Case.Pos.Line, Name: r.Case.Name, Target: r.Case.Target.String(), Unit: r.Unit,
				Passed: r.Passed(), Expected: nonNil(r.Case.Expect), Got: []string{}, Failures: r.Failures, Explanations: r.Explanations,
			}
			if r.Outcome != nil {
				tc.Got = nonNil(r.Outcome.Reached)
				tc.Destinations = r.Outcome.Destinations
			}
			rep.Cases = append(rep.Cases, tc)
		}
		err = writeJSON(w, rep)
	case "github":
		var diags diag.List
		for i := range results {
			r := &results[i]
			if r.Passed() {
				continue
			}
			msg := caseHeader(r) + ": " + strings.Join(r.Failures, "; ")
			if len(r.Explanations) > 0 {
				msg += "\n" + strings.Join(r.Explanations, "\n")
			}
			diags = append(diags, diag.Diagnostic{Pos: r.Pos(), Message: msg})
		}
		printGitHubAnnotations(w, diags)
	default:
		var buf bytes.Buffer
		for i := range results {
			r := &results[i]
			if r.Passed() {
				continue
			}
			// A case's failure is at its line; a name no unit holds, at
			// its line and column.
			at := fmt.Sprintf("%s:%d", r.File.Path, r.Case.Pos.Line)
			if r.Missing {
				at = r.Pos().String()
			}
			for _, failure := range r.Failures {
				fmt.Fprintf(&buf, "%s: %s: %s\n", at, caseHeader(r), failure)
			}
			for _, e := range r.Explanations {
				fmt.Fprintf(&buf, "    %s\n", e)
			}
		}
		counted := plural(len(cases), "case") + " in " + plural(len(files), "file")
		if failed > 0 {
			fmt.Fprintf(&buf, "FAIL: %d of %s\n", failed, counted)
		} else {
			fmt.Fprintf(&buf, "ok: %s\n", counted)
		}
		_, err = w.Write(buf.Bytes())
	}
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	if failed > 0 {
		return silentExit(exitFailed)
	}
	return nil
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// updateTestFiles writes each case's outcome into its file. A case whose
// Broker is in several units is written only when they agree; a case that
// cannot be evaluated is left as it is and reported.
func updateTestFiles(w io.Writer, files []*routetest.File, results []routetest.Result) error {
	byCase := map[*routetest.Case][]*routetest.Result{}
	for i := range results {
		byCase[results[i].Case] = append(byCase[results[i].Case], &results[i])
	}
	var problems []string
	for _, file := range files {
		outcomes := map[*routetest.Case]*routetest.Outcome{}
		for _, c := range file.Cases {
			rs := byCase[c]
			if len(rs) == 0 || rs[0].Outcome == nil {
				for _, r := range rs {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: %s", file.Path, c.Pos.Line, caseHeader(r), strings.Join(r.Failures, "; ")))
				}
				continue
			}
			o := rs[0].Outcome
			agree := true
			for _, r := range rs[1:] {
				if r.Outcome == nil || routetest.List(r.Outcome.Reached) != routetest.List(o.Reached) || routetest.List(r.Outcome.Destinations) != routetest.List(o.Destinations) {
					agree = false
				}
			}
			if !agree {
				problems = append(problems, fmt.Sprintf("%s:%d: case %s: the deploy units holding %s route it differently; split the case by unit", file.Path, c.Pos.Line, c.Name, c.Target))
				continue
			}
			outcomes[c] = o
		}
		src, err := file.Update(outcomes)
		if err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
		old, err := os.ReadFile(file.Path)
		if err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
		if bytes.Equal(old, src) {
			continue
		}
		if err := writeFileKeepMode(file.Path, src); err != nil {
			return &exitError{code: exitTrouble, err: err}
		}
		fmt.Fprintf(w, "updated %s\n", file.Path)
	}
	if len(problems) > 0 {
		for _, p := range problems {
			fmt.Fprintln(w, p)
		}
		return silentExit(exitFailed)
	}
	return nil
}

// writeFileKeepMode replaces a file through a temporary file beside it, so
// that an interrupted update never leaves half a test file.
func writeFileKeepMode(path string, data []byte) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(info.Mode().Perm()); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}
