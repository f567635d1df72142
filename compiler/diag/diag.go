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

// Diagnostic is one error found in the input.
type Diagnostic struct {
	Pos Pos `json:"pos"`
	// Path is the field path inside the object, such as spec.subscriber.ref;
	// empty when the error concerns the whole file or object.
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`
}

func (d Diagnostic) String() string {
	if d.Path == "" {
		return fmt.Sprintf("%s: %s", d.Pos, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.Pos, d.Path, d.Message)
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
