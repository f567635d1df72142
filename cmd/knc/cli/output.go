package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
)

// checkOutput validates an -o value up front, before any work is done.
func checkOutput(value string, allowed ...string) error {
	if slices.Contains(allowed, value) {
		return nil
	}
	return usageError("invalid output format %q for -o: use one of %s", value, strings.Join(allowed, ", "))
}

// printDiagnostics writes each diagnostic once, as FILE:LINE:COL: PATH: MESSAGE.
func printDiagnostics(w io.Writer, diags diag.List) {
	for _, d := range diags {
		fmt.Fprintln(w, d.String())
	}
}

// printGitHubAnnotations writes GitHub Actions workflow commands, which the
// Actions runner turns into annotations on the pull request's files. GitHub
// places them by paths relative to the repository's root, whatever the
// directory knc runs in.
func printGitHubAnnotations(w io.Writer, diags diag.List) {
	wd, _ := os.Getwd()
	top := gitTop(wd)
	for _, d := range diags {
		msg := d.Message
		if d.Path != "" {
			msg = d.Path + ": " + msg
		}
		file := d.Pos.File
		if top != "" && file != compiler.StdinName {
			abs := file
			if !filepath.IsAbs(abs) {
				abs = filepath.Join(wd, abs)
			}
			if rel, err := filepath.Rel(top, abs); err == nil && !strings.HasPrefix(rel, "..") {
				file = filepath.ToSlash(rel)
			}
		}
		if d.Pos.Line == 0 {
			fmt.Fprintf(w, "::%s file=%s::%s\n", d.Severity, escapeProperty(file), escapeData(msg))
			continue
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d::%s\n", d.Severity, escapeProperty(file), d.Pos.Line, d.Pos.Column, escapeData(msg))
	}
}

// gitTop is the top of the git work tree dir lies in, or "".
func gitTop(dir string) string {
	if dir == "" {
		return ""
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d
		}
		if filepath.Dir(d) == d {
			return ""
		}
	}
}

func escapeData(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A").Replace(s)
}

func escapeProperty(s string) string {
	return strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C").Replace(s)
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
