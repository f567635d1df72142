package diff

import (
	"path/filepath"
	"regexp"
	"strings"
)

// copyNames names the files of a revision as a user knows them, never by
// the directory the build saw the revision at: a file below the
// directory compiled from reads as in the work tree (eventing/env.yaml),
// as diagnostics do, and any other place in the revision in git's
// notation for a file at a revision (main:eventing, main: for the top).
type copyNames struct {
	rev     string
	top     []string // where the build saw the revision's top
	baseDir []string // the directory compiled from
	inCopy  *regexp.Regexp
}

func newCopyNames(rev, top, baseDir string) *copyNames {
	n := &copyNames{rev: rev, top: []string{filepath.Clean(top)}, baseDir: []string{filepath.Clean(baseDir)}}
	quoted := make([]string, len(n.top))
	for i, t := range n.top {
		quoted[i] = regexp.QuoteMeta(t)
	}
	// A path runs to the first character paths in messages are not
	// made of: space, quote, bracket, colon or comma.
	n.inCopy = regexp.MustCompile(`(?:` + strings.Join(quoted, "|") + `)(?:/[^\s"'()\[\]:,]*)?`)
	return n
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
