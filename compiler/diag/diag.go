// Package diag holds positioned diagnostics: what went wrong, where in which
// file, and at which field path. Every stage of the compiler reports through
// it, so errors print the same way whichever stage found them.
//
// It imports only the standard library.
package diag

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// Pos is a position in a source file. Line and Column are 1-based; 0 means
// unknown.
type Pos struct {
	File   string `json:"file"`
	Line   int    `json:"line"`
	Column int    `json:"column"`
}

func (p Pos) String() string {
	switch {
	case p.File == "":
		return "-"
	case p.Line == 0:
		return p.File
	default:
		return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Column)
	}
}

// Severity says whether a diagnostic refuses the input. The zero value is an
// error, so that every stage that does not think about severity refuses.
type Severity int

const (
	// Error refuses the input: Knative's admission would refuse it too, or
	// it cannot be compiled.
	Error Severity = iota
	// Warning is a check knc makes beyond Knative's admission, on purpose:
	// the input is admitted, unless the user asks for --strict.
	Warning
)

func (s Severity) String() string {
	if s == Warning {
		return "warning"
	}
	return "error"
}

// Diagnostic is one problem found in the input.
type Diagnostic struct {
	Pos Pos `json:"pos"`
	// Path is the field path inside the object, such as spec.subscriber.ref;
	// empty when the error concerns the whole file or object.
	Path     string   `json:"path,omitempty"`
	Message  string   `json:"message"`
	Severity Severity `json:"-"`
}

// String formats d as FILE:LINE:COL: PATH: MESSAGE, with "warning: " after
// the position for a warning.
func (d Diagnostic) String() string {
	prefix := d.Pos.String() + ": "
	if d.Severity == Warning {
		prefix += "warning: "
	}
	if d.Path == "" {
		return prefix + d.Message
	}
	return prefix + d.Path + ": " + d.Message
}

// List is a set of diagnostics. It is an error when non-empty.
type List []Diagnostic

// Error joins the diagnostics, one per line.
func (l List) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Err returns l as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}

// Add appends a diagnostic.
func (l *List) Add(pos Pos, path, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Path: path, Message: fmt.Sprintf(format, args...)})
}

// AddWarning appends a warning.
func (l *List) AddWarning(pos Pos, path, format string, args ...any) {
	*l = append(*l, Diagnostic{Pos: pos, Path: path, Message: fmt.Sprintf(format, args...), Severity: Warning})
}

// HasErrors reports whether any diagnostic is an error.
func (l List) HasErrors() bool {
	return slices.ContainsFunc(l, func(d Diagnostic) bool { return d.Severity == Error })
}

// Strict returns l with every warning turned into an error.
func (l List) Strict() List {
	out := slices.Clone(l)
	for i := range out {
		out[i].Severity = Error
	}
	return out
}

// Sorted returns the diagnostics ordered by file, line, column, path and
// message, with exact duplicates removed.
func (l List) Sorted() List {
	out := slices.Clone(l)
	slices.SortFunc(out, compare)
	return slices.CompactFunc(out, func(a, b Diagnostic) bool { return compare(a, b) == 0 })
}

func compare(a, b Diagnostic) int {
	return cmp.Or(
		cmp.Compare(a.Pos.File, b.Pos.File),
		cmp.Compare(a.Pos.Line, b.Pos.Line),
		cmp.Compare(a.Pos.Column, b.Pos.Column),
		cmp.Compare(a.Path, b.Path),
		cmp.Compare(a.Message, b.Message),
		cmp.Compare(a.Severity, b.Severity),
	)
}

// Relative rewrites file names relative to dir where that is shorter, so
// errors point at files as the user would type them.
func (l List) Relative(dir string) List {
	out := slices.Clone(l)
	for i := range out {
		out[i].Pos.File = RelPath(dir, out[i].Pos.File)
	}
	return out
}

// RelPath returns file relative to dir when file lies below dir.
func RelPath(dir, file string) string {
	if file == "" || !filepath.IsAbs(file) {
		return file
	}
	rel, err := filepath.Rel(dir, file)
	if err != nil || strings.HasPrefix(rel, "..") {
		return file
	}
	return rel
}
