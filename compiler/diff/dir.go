package diff

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/safeio"
)

// FileDiff is a file in which a fresh build and a directory differ.
type FileDiff struct {
	// Path is slash-separated, relative to the directory.
	Path string `json:"path"`
	// Change is Changed; Added for a file the build makes and the
	// directory lacks; Removed for a file the build no longer makes.
	Change string `json:"change"`
	// Diff is the unified diff from the directory's file to the build's.
	Diff string `json:"diff"`
}

// MaxFileBytes is the largest file of the directory CompareDir reads, well
// above any file a build makes.
const MaxFileBytes = 256 << 20

// CompareDir compares the files of a build (slash-separated path to
// content) with the files under dir, which label names in the diffs. The
// marker file of a build output is not compared. A missing dir is an empty
// one: every file is then Added.
//
// Symbolic links under dir are never followed: a build makes none, so a
// link differs from whatever the build makes, and what it points to is
// not read (a committed link to /proc/self/environ would otherwise print
// the environment of the CI job). The diff shows a line saying so in
// place of the content. Other files that are not regular are refused.
func CompareDir(build map[string][]byte, dir, label string) ([]FileDiff, error) {
	have := map[string][]byte{}
	// The directory named is followed when it is a link itself: the user
	// chose it.
	if info, err := os.Lstat(dir); err == nil && info.Mode()&fs.ModeSymlink != 0 {
		dir += string(filepath.Separator)
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel == load.OutputMarker {
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			have[rel] = fmt.Appendf(nil, "symbolic link to %q, not followed: a build makes regular files only\n", target)
			return nil
		}
		data, err := safeio.ReadFileNoFollow(p, MaxFileBytes)
		if err != nil {
			return err
		}
		have[rel] = data
		return nil
	})
	if err != nil {
		return nil, err
	}
	label = filepath.ToSlash(filepath.Clean(label))
	names := slices.Sorted(maps.Keys(build))
	for name := range have {
		if _, ok := build[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	var out []FileDiff
	for _, name := range names {
		want, inBuild := build[name]
		got, inDir := have[name]
		p := path.Join(label, name)
		switch {
		case !inDir:
			out = append(out, FileDiff{Path: name, Change: Added, Diff: Unified("/dev/null", "b/"+p, nil, want, 3)})
		case !inBuild:
			out = append(out, FileDiff{Path: name, Change: Removed, Diff: Unified("a/"+p, "/dev/null", got, nil, 3)})
		case !bytes.Equal(got, want):
			out = append(out, FileDiff{Path: name, Change: Changed, Diff: Unified("a/"+p, "b/"+p, got, want, 3)})
		}
	}
	return out, nil
}
