package render

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/parallel"
)

// Output is a rendered build: the files of the output directory.
type Output struct {
	// Files are sorted by path. Paths are slash-separated and relative to
	// the output directory.
	Files []File
	// resources indexes the files holding objects, in the order
	// kustomize applies them: CRDs, cluster-wide objects, namespaces.
	resources []int
	// Warnings are diagnostics about the output that do not stop it: an
	// unpinned runtime image.
	Warnings diag.List
}

// File is one file of the output.
type File struct {
	Path string
	Data []byte
	// documents locates each object's YAML in Data.
	documents []span
}

type span struct{ start, end int }

// markerContent explains the marker file to whoever finds it.
const markerContent = `This directory is written by knc build, which replaces all of it on every
build. Edit the manifests it is built from instead.
`

// Stream writes every object as one multi-document YAML stream, in the
// order kustomize would apply them.
func (o *Output) Stream(w io.Writer) error {
	for _, i := range o.resources {
		f := &o.Files[i]
		for _, d := range f.documents {
			if _, err := io.WriteString(w, "---\n"); err != nil {
				return err
			}
			if _, err := w.Write(f.Data[d.start:d.end]); err != nil {
				return err
			}
		}
	}
	return nil
}

// rename and writeFile are variables so that tests can make them fail.
var (
	rename    = os.Rename
	writeFile = writeSynced
)

// ErrNotOutput is returned when the output directory holds files but no
// marker: it is not a previous build's output and is not replaced.
var ErrNotOutput = errors.New("not a knc build output")

// Write replaces dir with the output, atomically: everything is written to
// a new directory next to it and synced, then the new directory is renamed
// into place and the old one removed. A failed write leaves dir as it was;
// files a build no longer produces disappear with the old directory.
//
// dir must be missing, empty, or a previous output (holding the marker
// file load.OutputMarker, which also keeps knc from reading the output
// back as input).
func (o *Output) Write(dir string) (err error) {
	dir = filepath.Clean(dir)
	exists, err := checkTarget(dir)
	if err != nil {
		return err
	}
	parent, base := filepath.Dir(dir), filepath.Base(dir)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	if err := removeLeftovers(parent, base); err != nil {
		return err
	}
	// A dot name keeps a leftover from a crash out of knc's inputs and out
	// of most listings.
	tmp, err := os.MkdirTemp(parent, "."+base+".new-")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Every write goes through an os.Root on the new directory, which
	// refuses a path that leads out of it, by ".." or by a symbolic link.
	// Names are checked before a build gets here; this is the second line.
	root, err := os.OpenRoot(tmp)
	if err != nil {
		return err
	}
	defer root.Close()
	files := append([]File{{Path: load.OutputMarker, Data: []byte(markerContent)}}, o.Files...)
	dirs := map[string]bool{".": true}
	for _, f := range files {
		p := filepath.FromSlash(f.Path)
		if !filepath.IsLocal(p) {
			return fmt.Errorf("refusing to write %q: the path leads out of the output directory", f.Path)
		}
		for d := filepath.Dir(p); d != "." && !dirs[d]; d = filepath.Dir(d) {
			dirs[d] = true
		}
		if err := root.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
	}
	// Waiting for each file to reach the disk is most of the time a write
	// takes; the disk can take several at once.
	errs := make([]error, len(files))
	parallel.ForWorkers(len(files), 8, func(i int) {
		errs[i] = writeFile(root, filepath.FromSlash(files[i].Path), files[i].Data)
	})
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for d := range dirs {
		if err := syncDir(root, d); err != nil {
			return err
		}
	}
	if !exists {
		if err := rename(tmp, dir); err != nil {
			return err
		}
		return syncParent(parent)
	}
	old := filepath.Join(parent, "."+base+".old-"+randomSuffix())
	if err := rename(dir, old); err != nil {
		return err
	}
	if err := rename(tmp, dir); err != nil {
		// Put the previous output back: a failed build changes nothing.
		return errors.Join(err, os.Rename(old, dir))
	}
	if err := syncParent(parent); err != nil {
		return err
	}
	return os.RemoveAll(old)
}

// removeLeftovers removes what a build killed between its two renames
// left beside the output directory: the new output it had not moved into
// place yet, or the previous one it had not removed yet. Either is
// replaced by this build.
func removeLeftovers(parent, base string) error {
	var errs []error
	for _, kind := range []string{".old-", ".new-"} {
		matches, err := filepath.Glob(filepath.Join(parent, "."+globEscape(base)+kind+"*"))
		if err != nil {
			return err
		}
		for _, m := range matches {
			errs = append(errs, os.RemoveAll(m))
		}
	}
	return errors.Join(errs...)
}

// globEscape quotes the characters filepath.Match treats specially.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`*?[\`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// checkTarget reports whether dir exists, and refuses a directory that
// holds files but is not a previous output.
func checkTarget(dir string) (bool, error) {
	info, err := os.Stat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !info.IsDir() {
		return false, fmt.Errorf("%s is a file, not a directory", dir)
	}
	if _, err := os.Stat(filepath.Join(dir, load.OutputMarker)); err == nil {
		return true, nil
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	if len(entries) > 0 {
		return false, fmt.Errorf("refusing to replace %s: %w (it holds files and no %s marker); choose an empty or new directory", dir, ErrNotOutput, load.OutputMarker)
	}
	return true, nil
}

func writeSynced(root *os.Root, path string, data []byte) error {
	f, err := root.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func syncDir(root *os.Root, dir string) error {
	d, err := root.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

func syncParent(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	return errors.Join(err, d.Close())
}

func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
