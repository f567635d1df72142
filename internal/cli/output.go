package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

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
// Actions runner turns into annotations on the pull request's files.
func printGitHubAnnotations(w io.Writer, diags diag.List) {
	for _, d := range diags {
		msg := d.Message
		if d.Path != "" {
			msg = d.Path + ": " + msg
		}
		fmt.Fprintf(w, "::%s file=%s,line=%d,col=%d::%s\n", d.Severity, escapeProperty(d.Pos.File), d.Pos.Line, d.Pos.Column, escapeData(msg))
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
