package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/compiler/live"
	"github.com/knc-dev/knc/internal/version"
	"github.com/knc-dev/knc/plugins"
)

type diffFlags struct {
	load    loadFlags
	base    string
	against string
	output  string
	color   string
	image   string
	graph   bool

	cluster       bool
	kube          clusterFlags
	kustomization string
	fieldManager  string
}

func newDiffCmd() *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff [PATH...] (--base GITREF | --against DIR | --cluster)",
		Short: "Show what a change to the manifests does, before it is rolled out",
		Long: `Diff compares the manifests in the working tree with another version.

With --base GITREF it compiles the same paths at a git revision (a commit,
branch or tag; paths are taken relative to the repository's root, and the
knc.yaml of that revision is used) and prints a semantic diff, summary
first: objects added, removed or changed, with the changed fields; routes
from a Broker or Channel to a subscriber gained or lost; filters that now
match fewer or more events; delivery options; and changes to what the
runtime serves. A change to a field Knative makes immutable (a Broker's
class annotation or spec.config, a Trigger's spec.broker, a Channel's
spec.channelTemplate, a Subscription's spec.channel) is an error, printed
on stderr: the object must be deleted and re-created.

The route test cases of the working tree (knc test) are run against both
revisions, and the cases whose outcome the change flips are listed under
Test cases: "passes → fails", with what the event reaches before and
after.

The comparison is made deploy unit by deploy unit, as knc validate checks
them: each kustomization no other one includes (an overlay) against the
same overlay at the base, and the plain files against the plain files. The
same Trigger in overlays/prod and overlays/staging is two objects, and a
change to a base they share shows in each. With several units, each change
names its unit, and -o json lists the units in "units".

The base revision is read with git, so a shallow clone works as long as it
holds the base commit; when it does not, diff says how to fetch it.

With --against DIR it builds the manifests in memory, as 'knc build' would,
and compares the result with DIR, a committed build output, printing a
unified diff per file: the check that nobody forgot to run knc build.
With several deploy units, each is compared with its subdirectory of DIR,
as knc build -o DIR writes them, and named; a unit missing from DIR, and a
subdirectory left from a unit that is gone, are differences too.

With --cluster it builds the manifests, as 'knc build' does without -o
(one deploy unit: give the overlay), and compares the build with the
cluster of the current kubeconfig context (--kubeconfig, --context), as
kubectl diff and flux diff kustomization do: each object is read live and
server-side applied with dryRun=All, with the field manager the output is
applied with (--field-manager; Flux's kustomize-controller by default),
and the live objects are compared with what the dry run returns, in the
semantic form of --base: routes, filters, delivery, and knc's own rules
for immutable fields, whatever the CRDs in the cluster say. It lists the
objects the apply would prune: those that belong to the output and that
the build no longer has. What belongs to the output is what the inventory
of a Flux Kustomization lists (--kustomization NAMESPACE/NAME), else what
carries the labels knc writes (app.kubernetes.io/managed-by=knc, and on
Knative objects the knc.dev/spec-hash annotation) in the namespaces of the
build: never everything in a namespace. Objects the API server refuses
are listed, with its message. Secret data is never shown: a value that
changes reads "(redacted, changed)". Nothing in the cluster is changed.

Formats (-o): text (coloured on a terminal; see --color), json, and
markdown, for a pull-request comment.

The exit code is as diff(1)'s: 0 when there is no difference, 1 when there
are differences (immutable-field errors included), 2 on trouble: a usage,
I/O or git error, a cluster that cannot be read, or manifests that do
not validate at either revision.`,
		Example: `  # What does this branch change, compared with main?
  knc diff --base main eventing/

  # What does it change in each overlay of a kustomize repository?
  knc diff --base main apps/

  # The comment for a pull request.
  knc diff --base "$BASE_SHA" -o markdown > comment.md

  # Fail CI when deploy/ is not the build of the manifests.
  knc diff --against deploy

  # What would rolling out this overlay change in the cluster?
  knc diff --cluster apps/production

  # The same, pruning as the Flux Kustomization that applies it does.
  knc diff --cluster apps/production --kustomization flux-system/eventing`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "text", "json", "markdown"); err != nil {
				return err
			}
			if f.color != "auto" && f.color != "always" && f.color != "never" {
				return usageError("invalid value %q for --color: use auto, always or never", f.color)
			}
			modes := 0
			for _, set := range []bool{f.base != "", f.against != "", f.cluster} {
				if set {
					modes++
				}
			}
			if !f.cluster && (f.kustomization != "" || f.fieldManager != "") {
				return usageError("--kustomization and --field-manager go with --cluster")
			}
			switch {
			case modes > 1:
				return usageError("--base GITREF, --against DIR and --cluster each name what to compare with: give only one of them")
			case f.cluster:
				return runDiffCluster(cmd, &f, args)
			case f.base != "":
				return runDiffBase(cmd, &f, args)
			case f.against != "":
				return runDiffAgainst(cmd, &f, args)
			}
			return usageError("diff needs --base GITREF (compare with a git revision), --against DIR (compare with a build output) or --cluster (compare with the cluster)")
		},
	}
	f.load.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "compare with the manifests at this git revision (`GITREF`: commit, branch or tag)")
	fl.StringVar(&f.against, "against", "", "compare a fresh build with this build output `DIR`")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text, json or markdown")
	fl.StringVar(&f.color, "color", "auto", "colour the text output: auto (on a terminal), always or never")
	fl.StringVar(&f.image, "image", "", "runtime container `IMAGE` for --against and --cluster, as for knc build")
	fl.BoolVar(&f.cluster, "cluster", false, "compare a fresh build with the cluster of the kubeconfig, through a server-side apply dry run")
	fl.StringVar(&f.kustomization, "kustomization", "", "with --cluster, the Flux Kustomization `NAMESPACE/NAME` whose inventory says what the apply prunes")
	fl.StringVar(&f.fieldManager, "field-manager", "", "with --cluster, the field manager the output is applied with (default \""+live.DefaultFieldManager+"\", Flux's)")
	f.kube.register(cmd)
	fl.BoolVar(&f.graph, "graph", true, "with -o markdown, draw a Mermaid graph of what changed")
	return cmd
}

// useColor decides whether text output is coloured: always, never, or on
// a terminal unless NO_COLOR is set.
func useColor(mode string, w io.Writer) bool {
	switch mode {
	case "always":
		return true
	case "never":
		return false
	}
	if os.Getenv("NO_COLOR") != "" {
		return false
	}
	file, ok := w.(*os.File)
	return ok && term.IsTerminal(int(file.Fd()))
}

// loadBothRevisions loads the working tree and the base revision, with the
// routing tables of both. Invalid manifests at either are trouble (exit
// 2), reported with the revision they are in.
func loadBothRevisions(ctx context.Context, stderr io.Writer, f *loadFlags, rev string, args []string) (base, head diff.Sides, r *diff.Revision, err error) {
	headRes, err := f.compile(ctx, args, compiler.Options{Routes: &compiler.RouteOptions{}})
	if err != nil {
		return base, head, nil, err
	}
	if !headRes.Valid() {
		fmt.Fprintln(stderr, "knc: the manifests in the working tree do not validate:")
		printDiagnostics(stderr, headRes.Diagnostics)
		return base, head, nil, silentExit(exitTrouble)
	}
	r, err = diff.LoadRevision(ctx, rev, f.options(args))
	if err != nil {
		return base, head, nil, loadFailure(err)
	}
	fail := func(err error) (diff.Sides, diff.Sides, *diff.Revision, error) {
		r.Close()
		return base, head, nil, err
	}
	if !r.Result.Valid() {
		fmt.Fprintf(stderr, "knc: the manifests at %s do not validate:\n", r.Short())
		printDiagnostics(stderr, r.Result.Diagnostics)
		return fail(silentExit(exitTrouble))
	}
	var diags diag.List
	if head, diags = diff.PrepareUnits(headRes); len(diags) > 0 {
		fmt.Fprintln(stderr, "knc: the manifests in the working tree do not compile:")
		printDiagnostics(stderr, diags)
		return fail(silentExit(exitTrouble))
	}
	if base, diags = diff.PrepareUnits(r.Result); len(diags) > 0 {
		fmt.Fprintf(stderr, "knc: the manifests at %s do not compile:\n", r.Short())
		printDiagnostics(stderr, diags)
		return fail(silentExit(exitTrouble))
	}
	return base, head, r, nil
}

func runDiffBase(cmd *cobra.Command, f *diffFlags, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	base, head, rev, err := loadBothRevisions(cmd.Context(), stderr, &f.load, f.base, args)
	if err != nil {
		return err
	}
	defer rev.Close()
	report := diff.CompareUnits(base, head)
	flips, err := testFlips(stderr, args, base, head)
	if err != nil {
		return err
	}
	report.AddTestFlips(flips)
	report.Base, report.Head = rev.Short(), "working tree"
	if wd, err := os.Getwd(); err == nil {
		report.Relative(wd)
	}
	printDiagnostics(stderr, report.Violations)
	switch f.output {
	case "json":
		err = writeJSON(stdout, report)
	case "markdown":
		err = report.WriteMarkdown(stdout, diff.MarkdownOptions{Graph: f.graph})
	default:
		err = report.WriteText(stdout, useColor(f.color, stdout))
	}
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	if report.Different {
		return silentExit(exitFailed)
	}
	return nil
}

// againstReport is the JSON form of --against.
type againstReport struct {
	Directory string        `json:"directory"`
	UpToDate  bool          `json:"upToDate"`
	Files     []againstFile `json:"files"`
	// Units, with several deploy units, says how each unit's subdirectory
	// compares with its build.
	Units []againstUnit `json:"units,omitempty"`
	// Stale lists the subdirectories, relative to Directory, that hold the
	// build of a deploy unit the paths no longer have.
	Stale []string `json:"stale,omitempty"`
}

// againstFile is a file that differs, with the deploy unit it belongs to
// when there are several ("" for a file of no unit's subdirectory).
type againstFile struct {
	diff.FileDiff
	Unit string `json:"unit,omitempty"`
}

// againstUnit is one deploy unit of several, and its subdirectory.
type againstUnit struct {
	Unit      string `json:"unit"`
	Directory string `json:"directory"`
	UpToDate  bool   `json:"upToDate"`
	// Missing is set when the subdirectory does not exist.
	Missing bool `json:"missing"`

	files int
}

// buildForDiff builds the repository as knc build would, for a diff with
// a build output or the cluster: manifests that do not validate or do not
// build are reported on stderr, exit 2, since there is nothing to compare.
func buildForDiff(cmd *cobra.Command, f *diffFlags, args []string, sel compiler.Selection) (*compiler.Result, error) {
	stderr := cmd.ErrOrStderr()
	res, err := f.load.compile(cmd.Context(), args, compiler.Options{Select: sel, Command: "diff", Render: &compiler.RenderOptions{Image: f.image, Version: version.Get(), Backends: plugins.Backends}})
	if res == nil {
		return nil, err
	}
	if !res.Valid() {
		fmt.Fprintln(stderr, "knc: the manifests do not validate:")
		printDiagnostics(stderr, res.Diagnostics)
		return nil, silentExit(exitTrouble)
	}
	if err != nil {
		return nil, err
	}
	if len(res.Later) > 0 {
		fmt.Fprintln(stderr, "knc: the manifests do not build:")
		printDiagnostics(stderr, res.Later)
		return nil, silentExit(exitTrouble)
	}
	return res, nil
}

func runDiffAgainst(cmd *cobra.Command, f *diffFlags, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	res, err := buildForDiff(cmd, f, args, compiler.EachUnit)
	if err != nil {
		return err
	}
	out := res.Output
	built := make(map[string][]byte, len(out.Files))
	for _, file := range out.Files {
		built[file.Path] = file.Data
	}
	if _, err := os.Stat(f.against); errors.Is(err, fs.ErrNotExist) {
		fmt.Fprintf(stderr, "knc: %s does not exist: every file of the build is missing from it\n", f.against)
	}
	files, err := diff.CompareDir(built, f.against, f.against)
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	rep := compareUnits(f.against, res, files)
	switch f.output {
	case "json":
		err = writeJSON(stdout, rep)
	case "markdown":
		err = writeAgainstMarkdown(stdout, rep)
	default:
		err = writeAgainstText(stdout, rep, useColor(f.color, stdout))
	}
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	if !rep.UpToDate {
		build := "knc build -o " + f.against
		if len(args) > 0 {
			build += " " + strings.Join(args, " ")
		}
		fmt.Fprintf(stderr, "knc: %s is not the build of the manifests; run %s and commit the result\n", f.against, build)
		return silentExit(exitFailed)
	}
	return nil
}

// compareUnits sorts the files that differ into the units whose
// subdirectories hold them. A file in no unit's subdirectory is left over
// from a unit that is gone; the directory holding its kustomization.yaml is
// reported as stale.
func compareUnits(dir string, res *compiler.Result, files []diff.FileDiff) againstReport {
	rep := againstReport{Directory: dir, UpToDate: len(files) == 0, Files: []againstFile{}}
	units := res.Units
	several := len(units) > 1 || len(units) == 1 && units[0].OutputDir != ""
	byDir := map[string]*againstUnit{}
	if several {
		for _, u := range units {
			_, err := os.Stat(filepath.Join(dir, filepath.FromSlash(u.OutputDir)))
			rep.Units = append(rep.Units, againstUnit{Unit: u.Name(), Directory: u.OutputDir, UpToDate: true, Missing: errors.Is(err, fs.ErrNotExist)})
		}
		for i := range rep.Units {
			byDir[rep.Units[i].Directory] = &rep.Units[i]
		}
	}
	stale := map[string]bool{}
	for _, file := range files {
		af := againstFile{FileDiff: file}
		if several {
			if u := res.UnitOf(file.Path); u != nil {
				af.Unit = u.Name()
				byDir[u.OutputDir].UpToDate = false
				byDir[u.OutputDir].files++
			} else if path.Base(file.Path) == "kustomization.yaml" {
				stale[path.Dir(file.Path)] = true
			}
		}
		rep.Files = append(rep.Files, af)
	}
	// A unit's build has kustomizations below its own; the stale directory
	// is the topmost.
	for _, dir := range slices.Sorted(maps.Keys(stale)) {
		if !inStale(rep.Stale, dir) {
			rep.Stale = append(rep.Stale, dir)
		}
	}
	return rep
}

// againstSummary counts the files by change: "2 files differ: 1 changed, 1
// missing".
func againstSummary(dir string, files []againstFile) string {
	var changed, added, removed int
	for _, file := range files {
		switch file.Change {
		case diff.Added:
			added++
		case diff.Removed:
			removed++
		default:
			changed++
		}
	}
	var parts []string
	if changed > 0 {
		parts = append(parts, fmt.Sprintf("%d changed", changed))
	}
	if added > 0 {
		parts = append(parts, fmt.Sprintf("%d missing from %s", added, dir))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d no longer built", removed))
	}
	n := "1 file differs"
	if len(files) != 1 {
		n = fmt.Sprintf("%d files differ", len(files))
	}
	return n + ": " + strings.Join(parts, ", ")
}

// unitFiles are the files of rep that belong to unit ("" for those of no
// unit).
func unitFiles(rep againstReport, unit string) []againstFile {
	var out []againstFile
	for _, file := range rep.Files {
		if file.Unit == unit {
			out = append(out, file)
		}
	}
	return out
}

// staleLabel names a stale subdirectory: the output directory itself when
// it holds the build of a single unit and the paths now hold several.
func staleLabel(rep againstReport, dir string) string {
	return path.Join(filepath.ToSlash(rep.Directory), dir)
}

func writeAgainstText(w io.Writer, rep againstReport, colour bool) error {
	if rep.UpToDate {
		_, err := fmt.Fprintf(w, "%s is up to date with the manifests.\n", rep.Directory)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not the build of the manifests; %s.\n", rep.Directory, againstSummary(rep.Directory, rep.Files))
	writeDiffs := func(files []againstFile) {
		for _, file := range files {
			d := file.Diff
			if d == "" {
				// An empty file the directory lacks, or has and should not.
				d = fmt.Sprintf("%s %s: empty file\n", file.Change, file.Path)
			}
			if colour {
				d = diff.ColorUnified(d)
			}
			b.WriteString(d)
		}
	}
	if len(rep.Units) == 0 {
		writeDiffs(rep.Files)
		_, err := io.WriteString(w, b.String())
		return err
	}
	for _, u := range rep.Units {
		sub := staleLabel(rep, u.Directory)
		switch {
		case u.UpToDate:
			fmt.Fprintf(&b, "\n%s, in %s: up to date.\n", u.Unit, sub)
		case u.Missing:
			// Every file would be an added one: the diffs say nothing more.
			fmt.Fprintf(&b, "\n%s, in %s: missing; %s has no build of this unit.\n", u.Unit, sub, rep.Directory)
		default:
			files := unitFiles(rep, u.Unit)
			fmt.Fprintf(&b, "\n%s, in %s: %s.\n", u.Unit, sub, againstSummary(sub, files))
			writeDiffs(files)
		}
	}
	for _, dir := range rep.Stale {
		fmt.Fprintf(&b, "\n%s: stale; it holds the build of a deploy unit the manifests no longer have, and the next build removes it.\n", staleLabel(rep, dir))
	}
	var outside []againstFile
	for _, file := range unitFiles(rep, "") {
		if !inStale(rep.Stale, file.Path) {
			outside = append(outside, file)
		}
	}
	if len(outside) > 0 {
		fmt.Fprintf(&b, "\nOutside every deploy unit's directory: %s.\n", againstSummary(rep.Directory, outside))
		writeDiffs(outside)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// inStale reports whether file (or directory) is in one of the stale
// directories.
func inStale(stale []string, file string) bool {
	for _, dir := range stale {
		if dir == "." || strings.HasPrefix(file, dir+"/") {
			return true
		}
	}
	return false
}

func writeAgainstMarkdown(w io.Writer, rep againstReport) error {
	var b strings.Builder
	b.WriteString(diff.MarkdownMarker + "\n")
	if rep.UpToDate {
		fmt.Fprintf(&b, "`%s` is up to date with the manifests.\n", rep.Directory)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "### `%s` is not the build of the manifests\n\n%s. Run `knc build -o %s` and commit the result.\n\n", rep.Directory, againstSummary(rep.Directory, rep.Files), rep.Directory)
	if len(rep.Units) > 0 {
		b.WriteString("| deploy unit | directory | state |\n|:--|:--|:--|\n")
		for _, u := range rep.Units {
			state := "up to date"
			switch {
			case u.Missing:
				state = "missing"
			case !u.UpToDate:
				state = fmt.Sprintf("%d files differ", u.files)
				if u.files == 1 {
					state = "1 file differs"
				}
			}
			fmt.Fprintf(&b, "| %s | `%s` | %s |\n", u.Unit, staleLabel(rep, u.Directory), state)
		}
		for _, dir := range rep.Stale {
			fmt.Fprintf(&b, "| (none any more) | `%s` | stale |\n", staleLabel(rep, dir))
		}
		b.WriteString("\n")
	}
	b.WriteString("| file | change |\n|:--|:--|\n")
	for _, file := range rep.Files {
		fmt.Fprintf(&b, "| `%s` | %s |\n", file.Path, file.Change)
	}
	for _, file := range rep.Files {
		fence := "```"
		for strings.Contains(file.Diff, fence) {
			fence += "`"
		}
		fmt.Fprintf(&b, "\n<details><summary><code>%s</code></summary>\n\n%sdiff\n%s%s\n\n</details>\n", file.Path, fence, file.Diff, fence)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// addImmutableChanges adds to res the changes to immutable fields since
// rev, as errors, for knc validate --base. Manifests that do not validate
// at rev are trouble: nothing can be compared with them.
func addImmutableChanges(cmd *cobra.Command, rev string, flags *loadFlags, args []string, res *compiler.Result) error {
	r, err := diff.LoadRevision(cmd.Context(), rev, flags.options(args))
	if err != nil {
		return loadFailure(err)
	}
	defer r.Close()
	if !r.Result.Valid() {
		stderr := cmd.ErrOrStderr()
		fmt.Fprintf(stderr, "knc: cannot check immutable fields: the manifests at %s do not validate:\n", r.Short())
		printDiagnostics(stderr, r.Result.Diagnostics)
		return silentExit(exitTrouble)
	}
	violations := diff.ImmutableUnits(r.Result, res)
	if wd, err := os.Getwd(); err == nil {
		violations = violations.Relative(wd)
	}
	res.Diagnostics = append(res.Diagnostics, violations...).Sorted()
	return nil
}

// runDiffCluster compares a fresh build with the cluster, through a
// server-side apply dry run.
func runDiffCluster(cmd *cobra.Command, f *diffFlags, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	res, err := buildForDiff(cmd, f, args, compiler.OneUnit)
	if err != nil {
		return err
	}
	c, err := f.kube.connect()
	if err != nil {
		return err
	}
	report, err := live.Diff(cmd.Context(), c, res, live.DiffOptions{FieldManager: f.fieldManager, Kustomization: f.kustomization})
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	report.Base, report.Head = "cluster "+c.Context, "build"
	if wd, err := os.Getwd(); err == nil {
		report.Relative(wd)
	}
	printDiagnostics(stderr, report.Violations)
	switch f.output {
	case "json":
		err = writeJSON(stdout, report)
	case "markdown":
		err = report.WriteMarkdown(stdout, diff.MarkdownOptions{Graph: f.graph})
	default:
		err = report.WriteText(stdout, useColor(f.color, stdout))
	}
	if err != nil {
		return &exitError{code: exitTrouble, err: err}
	}
	if report.Changed() {
		return silentExit(exitFailed)
	}
	return nil
}
