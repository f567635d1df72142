// Package inputfs is the file system a build reads its input from: the
// disk, or an fs.FS (a test's fstest.MapFS, a git revision) mounted at a
// directory, so that the stages of the pipeline name files by the same
// absolute paths whichever it is, and none of them touches the disk when
// the input is not there.
//
// Paths are the operating system's (filepath), absolute once the pipeline
// has located its input. A mounted fs.FS answers only for the paths below
// its mount point: anything else does not exist, so that a path that
// escapes the mount never reaches the disk.
package inputfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/knc-dev/knc/internal/safeio"
)

// FS is what the stages read. Its methods behave as the functions of os
// and filepath they are named after.
type FS interface {
	Stat(name string) (fs.FileInfo, error)
	Lstat(name string) (fs.FileInfo, error)
	ReadLink(name string) (string, error)
	// ReadDir lists a directory sorted by name, as os.ReadDir does.
	ReadDir(name string) ([]fs.DirEntry, error)
	EvalSymlinks(name string) (string, error)
	// WalkDir walks as filepath.WalkDir does: a trailing separator on
	// root makes it follow root when root is a link.
	WalkDir(root string, fn fs.WalkDirFunc) error
	// ReadFile reads a regular file of at most limit bytes, with the
	// errors of safeio.ReadFile.
	ReadFile(name string, limit int64) ([]byte, error)
}

// Or is fsys, or the disk when fsys is nil.
func Or(fsys FS) FS {
	if fsys == nil {
		return Disk
	}
	return fsys
}

// Disk is the operating system's file system.
var Disk FS = disk{}

type disk struct{}

func (disk) Stat(name string) (fs.FileInfo, error)      { return os.Stat(name) }
func (disk) Lstat(name string) (fs.FileInfo, error)     { return os.Lstat(name) }
func (disk) ReadLink(name string) (string, error)       { return os.Readlink(name) }
func (disk) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }
func (disk) EvalSymlinks(name string) (string, error)   { return filepath.EvalSymlinks(name) }
func (disk) WalkDir(root string, fn fs.WalkDirFunc) error {
	return filepath.WalkDir(root, fn)
}
func (disk) ReadFile(name string, limit int64) ([]byte, error) { return safeio.ReadFile(name, limit) }

// Within is safeio.Within over fsys: an error wrapping
// safeio.ErrLinkOutside when path, its links resolved, is not below root.
func Within(fsys FS, root, path string) error {
	if _, ok := fsys.(disk); ok {
		return safeio.Within(root, path)
	}
	target, err := fsys.EvalSymlinks(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	base, err := fsys.EvalSymlinks(root)
	if err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	if rel, err := filepath.Rel(base, target); err != nil || rel != "." && !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: %w %s (it leads to %s); copy the file into the project", path, safeio.ErrLinkOutside, base, target)
	}
	return nil
}

// Exists reports whether name, its links followed, is there.
func Exists(fsys FS, name string) bool {
	_, err := fsys.Stat(name)
	return err == nil
}

// Mount is fsys seen at the absolute directory at: the file a/b of fsys
// is filepath.Join(at, "a", "b"). Symbolic links are those of an
// fs.ReadLinkFS, their targets paths as on a disk: an absolute one, or one
// that climbs above at, leads out of the mount, to nothing.
func Mount(fsys fs.FS, at string) FS {
	return &mounted{fsys: fsys, at: filepath.Clean(at)}
}

type mounted struct {
	fsys fs.FS
	at   string
}

// maxLinkHops bounds the links one path may go through, as the kernel's
// own limit does, so that a cycle of links ends.
const maxLinkHops = 255

// name is the fs.FS name of the OS path p, or an error when p lies
// outside the mount.
func (m *mounted) name(op, p string) (string, error) {
	rel, err := filepath.Rel(m.at, p)
	if err != nil || !filepath.IsAbs(p) || rel != "." && !filepath.IsLocal(rel) {
		return "", &fs.PathError{Op: op, Path: p, Err: fs.ErrNotExist}
	}
	return filepath.ToSlash(rel), nil
}

func (m *mounted) Lstat(p string) (fs.FileInfo, error) {
	if strings.HasSuffix(p, string(filepath.Separator)) && filepath.Clean(p) != m.at {
		// As on a disk, a trailing separator follows a link.
		return m.Stat(p)
	}
	name, err := m.name("lstat", p)
	if err != nil {
		return nil, err
	}
	info, err := fs.Lstat(m.fsys, name)
	return info, pathError(err, "lstat", p)
}

func (m *mounted) ReadLink(p string) (string, error) {
	name, err := m.name("readlink", p)
	if err != nil {
		return "", err
	}
	target, err := fs.ReadLink(m.fsys, name)
	if err != nil {
		return "", pathError(err, "readlink", p)
	}
	return filepath.FromSlash(target), nil
}

// resolved is the fs.FS name of what p leads to once its links are
// followed, for the operation op.
func (m *mounted) resolved(op, p string) (string, error) {
	target, err := m.EvalSymlinks(p)
	if err != nil {
		return "", pathError(err, op, p)
	}
	return m.name(op, target)
}

func (m *mounted) Stat(p string) (fs.FileInfo, error) {
	name, err := m.resolved("stat", p)
	if err != nil {
		return nil, err
	}
	info, err := fs.Lstat(m.fsys, name)
	return info, pathError(err, "stat", p)
}

func (m *mounted) ReadDir(p string) ([]fs.DirEntry, error) {
	name, err := m.resolved("open", p)
	if err != nil {
		return nil, err
	}
	entries, err := fs.ReadDir(m.fsys, name)
	if err != nil {
		return nil, pathError(err, "readdirent", p)
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}

// EvalSymlinks resolves the links of p one name at a time, each target
// taken within the mount.
func (m *mounted) EvalSymlinks(p string) (string, error) {
	if !filepath.IsAbs(p) {
		return "", &fs.PathError{Op: "lstat", Path: p, Err: fs.ErrNotExist}
	}
	rel, err := m.name("lstat", filepath.Clean(p))
	if err != nil {
		return "", err
	}
	var rest []string
	if rel != "." {
		rest = strings.Split(rel, "/")
	}
	cur := m.at
	for hops := 0; len(rest) > 0; {
		next := filepath.Join(cur, rest[0])
		name, _ := m.name("lstat", next)
		info, err := fs.Lstat(m.fsys, name)
		if err != nil {
			return "", pathError(err, "lstat", next)
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			if len(rest) > 1 && !info.IsDir() {
				return "", &fs.PathError{Op: "lstat", Path: p, Err: errors.New("not a directory")}
			}
			cur, rest = next, rest[1:]
			continue
		}
		if hops++; hops > maxLinkHops {
			return "", &fs.PathError{Op: "lstat", Path: p, Err: errors.New("too many levels of symbolic links")}
		}
		target, err := m.ReadLink(next)
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(cur, target)
		}
		r, err := m.name("lstat", filepath.Clean(target))
		if err != nil {
			return "", err
		}
		var head []string
		if r != "." {
			head = strings.Split(r, "/")
		}
		cur, rest = m.at, append(head, rest[1:]...)
	}
	return cur, nil
}

func (m *mounted) ReadFile(p string, limit int64) ([]byte, error) {
	name, err := m.resolved("open", p)
	if err != nil {
		return nil, err
	}
	f, err := m.fsys.Open(name)
	if err != nil {
		return nil, pathError(err, "open", p)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, safeio.NotRegular(p, info.Mode())
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: %w of %d bytes (it holds %d)", p, safeio.ErrTooLarge, limit, info.Size())
	}
	return safeio.ReadAll(io.LimitReader(f, limit+1), p, limit)
}

// WalkDir walks as filepath.WalkDir does, over the mount.
func (m *mounted) WalkDir(root string, fn fs.WalkDirFunc) error {
	info, err := m.Lstat(root)
	if err != nil {
		err = fn(root, nil, err)
	} else {
		err = m.walkDir(root, fs.FileInfoToDirEntry(info), fn)
	}
	if err == filepath.SkipDir || err == filepath.SkipAll {
		return nil
	}
	return err
}

func (m *mounted) walkDir(p string, d fs.DirEntry, fn fs.WalkDirFunc) error {
	if err := fn(p, d, nil); err != nil || !d.IsDir() {
		if err == filepath.SkipDir && d.IsDir() {
			err = nil
		}
		return err
	}
	entries, err := m.ReadDir(p)
	if err != nil {
		err = fn(p, d, err)
		if err != nil {
			if err == filepath.SkipDir && d.IsDir() {
				err = nil
			}
			return err
		}
	}
	for _, e := range entries {
		if err := m.walkDir(filepath.Join(p, e.Name()), e, fn); err != nil {
			if err == filepath.SkipDir {
				break
			}
			return err
		}
	}
	return nil
}

// pathError is err naming p, as the os functions name what they were
// given rather than the fs.FS name.
func pathError(err error, op, p string) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return &fs.PathError{Op: op, Path: p, Err: pe.Err}
	}
	return err
}
