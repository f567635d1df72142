package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/diff"
	"github.com/knc-dev/knc/compiler/render"
	"github.com/knc-dev/knc/internal/version"
)

type diffFlags struct {
	load    loadFlags
	base    string
	against string
	output  string
	color   string
	image   string
	graph   bool
}

func newDiffCmd() *cobra.Command {
	var f diffFlags
	cmd := &cobra.Command{
		Use:   "diff [PATH...] (--base GITREF | --against DIR)",
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

Formats (-o): text (coloured on a terminal; see --color), json, and
markdown, for a pull-request comment.

The exit code is as diff(1)'s: 0 when there is no difference, 1 when there
are differences (immutable-field errors included), 2 on trouble: a usage,
I/O or git error, or manifests that do not validate at either revision.`,
		Example: `  # What does this branch change, compared with main?
  knc diff --base main eventing/

  # What does it change in each overlay of a kustomize repository?
  knc diff --base main apps/

  # The comment for a pull request.
  knc diff --base "$BASE_SHA" -o markdown > comment.md

  # Fail CI when deploy/ is not the build of the manifests.
  knc diff --against deploy`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(f.output, "text", "json", "markdown"); err != nil {
				return err
			}
			if f.color != "auto" && f.color != "always" && f.color != "never" {
				return usageError("invalid value %q for --color: use auto, always or never", f.color)
			}
			switch {
			case f.base != "" && f.against != "":
				return usageError("give --base GITREF or --against DIR, not both")
			case f.base != "":
				return runDiffBase(cmd, &f, args)
			case f.against != "":
				return runDiffAgainst(cmd, &f, args)
			}
			return usageError("diff needs --base GITREF (compare with a git revision) or --against DIR (compare with a build output)")
		},
	}
	f.load.register(cmd)
	fl := cmd.Flags()
	fl.StringVar(&f.base, "base", "", "compare with the manifests at this git revision (`GITREF`: commit, branch or tag)")
	fl.StringVar(&f.against, "against", "", "compare a fresh build with this build output `DIR`")
	fl.StringVarP(&f.output, "output", "o", "text", "output format: text, json or markdown")
	fl.StringVar(&f.color, "color", "auto", "colour the text output: auto (on a terminal), always or never")
	fl.StringVar(&f.image, "image", "", "runtime container `IMAGE` for --against, as for knc build")
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
	headRes, err := f.load(args)
	if err != nil {
		return base, head, nil, err
	}
	if !headRes.Valid() {
		fmt.Fprintln(stderr, "knc: the manifests in the working tree do not validate:")
		printDiagnostics(stderr, headRes.Diagnostics)
		return base, head, nil, silentExit(exitTrouble)
	}
	r, err = diff.LoadRevision(ctx, rev, compiler.Options{Paths: args, ConfigFile: f.config, Exclude: f.exclude, CUELimits: f.cue.limits})
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
	Directory string          `json:"directory"`
	UpToDate  bool            `json:"upToDate"`
	Files     []diff.FileDiff `json:"files"`
}

func runDiffAgainst(cmd *cobra.Command, f *diffFlags, args []string) error {
	stdout, stderr := cmd.OutOrStdout(), cmd.ErrOrStderr()
	res, err := f.load.load(args)
	if err != nil {
		return err
	}
	if !res.Valid() {
		fmt.Fprintln(stderr, "knc: the manifests do not validate:")
		printDiagnostics(stderr, res.Diagnostics)
		return silentExit(exitTrouble)
	}
	if res, err = singleUnit(res, "diff"); err != nil {
		return err
	}
	out, diags, err := render.Render(res.Set, res.Config, render.Options{Image: f.image, Version: version.Get(), Root: projectRoot(res, args), CUELimits: f.load.cue.limits})
	if err != nil {
		return loadFailure(err)
	}
	if len(diags) > 0 {
		if wd, err := os.Getwd(); err == nil {
			diags = diags.Relative(wd)
		}
		fmt.Fprintln(stderr, "knc: the manifests do not build:")
		printDiagnostics(stderr, diags.Sorted())
		return silentExit(exitTrouble)
	}
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
	rep := againstReport{Directory: f.against, UpToDate: len(files) == 0, Files: files}
	if rep.Files == nil {
		rep.Files = []diff.FileDiff{}
	}
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

// againstSummary counts the files by change: "2 files differ: 1 changed, 1
// missing".
func againstSummary(rep againstReport) string {
	var changed, added, removed int
	for _, file := range rep.Files {
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
		parts = append(parts, fmt.Sprintf("%d missing from %s", added, rep.Directory))
	}
	if removed > 0 {
		parts = append(parts, fmt.Sprintf("%d no longer built", removed))
	}
	n := "1 file differs"
	if len(rep.Files) != 1 {
		n = fmt.Sprintf("%d files differ", len(rep.Files))
	}
	return n + ": " + strings.Join(parts, ", ")
}

func writeAgainstText(w io.Writer, rep againstReport, colour bool) error {
	if rep.UpToDate {
		_, err := fmt.Fprintf(w, "%s is up to date with the manifests.\n", rep.Directory)
		return err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is not the build of the manifests; %s.\n", rep.Directory, againstSummary(rep))
	for _, file := range rep.Files {
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
	_, err := io.WriteString(w, b.String())
	return err
}

func writeAgainstMarkdown(w io.Writer, rep againstReport) error {
	var b strings.Builder
	b.WriteString(diff.MarkdownMarker + "\n")
	if rep.UpToDate {
		fmt.Fprintf(&b, "`%s` is up to date with the manifests.\n", rep.Directory)
		_, err := io.WriteString(w, b.String())
		return err
	}
	fmt.Fprintf(&b, "### `%s` is not the build of the manifests\n\n%s. Run `knc build -o %s` and commit the result.\n\n", rep.Directory, againstSummary(rep), rep.Directory)
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
	r, err := diff.LoadRevision(cmd.Context(), rev, compiler.Options{Paths: args, ConfigFile: flags.config, Exclude: flags.exclude, CUELimits: flags.cue.limits})
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
	violations := diff.Immutable(r.Result.Set, res.Set)
	if wd, err := os.Getwd(); err == nil {
		violations = violations.Relative(wd)
	}
	res.Diagnostics = append(res.Diagnostics, violations...).Sorted()
	return nil
}
