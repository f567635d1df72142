package diff

import (
	"path/filepath"
	"regexp"
	"strings"
)

// copyNames names the files of a revision's scratch copy as a user knows
// them, never by the copy's own place on this machine: a file below the
// directory compiled from reads as in the work tree (eventing/env.yaml),
// as diagnostics do, and any other place in the copy in git's notation
// for a file at a revision (main:eventing, main: for the top).
type copyNames struct {
	rev     string
	top     []string // the copy's directory, as made and resolved
	baseDir []string // the directory compiled from, as made and resolved
	inCopy  *regexp.Regexp
}

func newCopyNames(rev, tmp, baseDir string) *copyNames {
	n := &copyNames{rev: rev, top: spellings(tmp), baseDir: spellings(baseDir)}
	quoted := make([]string, len(n.top))
	for i, t := range n.top {
		quoted[i] = regexp.QuoteMeta(t)
	}
	// A path runs to the first character paths in messages are not
	// made of: space, quote, bracket, colon or comma.
	n.inCopy = regexp.MustCompile(`(?:` + strings.Join(quoted, "|") + `)(?:/[^\s"'()\[\]:,]*)?`)
	return n
}

// spellings are dir and, when it differs, dir with its links resolved:
// the loader names a file by either.
func spellings(dir string) []string {
	out := []string{filepath.Clean(dir)}
	if r, err := filepath.EvalSymlinks(dir); err == nil && filepath.Clean(r) != out[0] {
		out = append(out, filepath.Clean(r))
	}
	return out
}

// of names file, a path in the copy or not.
func (n *copyNames) of(file string) string {
	if file == "" || !filepath.IsAbs(file) {
		return file
	}
	for _, base := range n.baseDir {
		if rel, err := filepath.Rel(base, file); err == nil && rel != "." && filepath.IsLocal(rel) {
			return rel
		}
	}
	for _, top := range n.top {
		if rel, err := filepath.Rel(top, file); err == nil && (rel == "." || filepath.IsLocal(rel)) {
			if rel == "." {
				rel = ""
			}
			return n.rev + ":" + filepath.ToSlash(rel)
		}
	}
	return file
}

// inText names every path of the copy in text.
func (n *copyNames) inText(text string) string {
	return n.inCopy.ReplaceAllStringFunc(text, n.of)
}

// inError is err with every path of the copy in its message named by of;
// errors.Is and errors.As still see err.
func (n *copyNames) inError(err error) error {
	if err == nil {
		return nil
	}
	msg := n.inText(err.Error())
	if msg == err.Error() {
		return err
	}
	return &renamedError{msg: msg, err: err}
}

type renamedError struct {
	msg string
	err error
}

func (e *renamedError) Error() string { return e.msg }
func (e *renamedError) Unwrap() error { return e.err }
