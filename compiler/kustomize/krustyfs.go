package kustomize

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"

	securefs "github.com/fluxcd/pkg/kustomize/filesys"
	"sigs.k8s.io/kustomize/kyaml/filesys"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/inputfs"
)

// krustyFS is the file system krusty builds from, which may read nothing
// outside root: on the disk, Flux's secure file system, as Flux builds;
// over any other input, readOnlyFS, which keeps the same rule.
func krustyFS(fsys inputfs.FS, root string) (filesys.FileSystem, error) {
	if fsys == inputfs.Disk {
		return securefs.MakeFsOnDiskSecure(root)
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	resolved, err := fsys.EvalSymlinks(abs)
	if err != nil {
		return nil, fmt.Errorf("evalsymlink failure on '%s' : %w", root, err)
	}
	return &readOnlyFS{fs: fsys, root: filesys.ConfirmedDir(resolved)}, nil
}

// readOnlyFS is kustomize's filesys.FileSystem over an inputfs.FS,
// confined to root as Flux's secure file system is: a path whose links
// lead outside root is refused. kustomize builds without writing; the
// writing methods fail.
type readOnlyFS struct {
	fs   inputfs.FS
	root filesys.ConfirmedDir
}

var errReadOnly = errors.New("the input of a build is read-only")

// constraintError reads as the error of Flux's secure file system.
type constraintError struct {
	op, path string
	err      error
}

func (e *constraintError) Error() string {
	return "fs-security-constraint " + e.op + " " + e.path + ": " + e.err.Error()
}

func (e *constraintError) Unwrap() error { return e.err }

// secure refuses path when, its links resolved, its directory is not in
// or below the root.
func (f *readOnlyFS) secure(op, path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return &constraintError{op, path, err}
	}
	d := filesys.ConfirmedDir(abs)
	if inputfs.Exists(f.fs, abs) {
		evaluated, err := f.fs.EvalSymlinks(abs)
		if err != nil {
			return &constraintError{op, path, fmt.Errorf("evalsymlink failure on '%s': %w", path, err)}
		}
		if info, err := f.fs.Stat(evaluated); err != nil || !info.IsDir() {
			evaluated = filepath.Dir(evaluated)
		}
		d = filesys.ConfirmedDir(evaluated)
	}
	if !d.HasPrefix(f.root) {
		return &constraintError{op, path, fmt.Errorf("path '%s' is not in or below '%s'", path, f.root)}
	}
	return nil
}

func (f *readOnlyFS) Create(path string) (filesys.File, error) {
	return nil, &fs.PathError{Op: "create", Path: path, Err: errReadOnly}
}
func (f *readOnlyFS) Mkdir(path string) error {
	return &fs.PathError{Op: "mkdir", Path: path, Err: errReadOnly}
}
func (f *readOnlyFS) MkdirAll(path string) error {
	return &fs.PathError{Op: "mkdir", Path: path, Err: errReadOnly}
}
func (f *readOnlyFS) RemoveAll(path string) error {
	return &fs.PathError{Op: "remove", Path: path, Err: errReadOnly}
}
func (f *readOnlyFS) WriteFile(path string, _ []byte) error {
	return &fs.PathError{Op: "write", Path: path, Err: errReadOnly}
}

func (f *readOnlyFS) Open(path string) (filesys.File, error) {
	data, err := f.ReadFile(path)
	if err != nil {
		return nil, err
	}
	info, err := f.fs.Stat(abs(path))
	if err != nil {
		return nil, err
	}
	return &readOnlyFile{Reader: bytes.NewReader(data), info: info}, nil
}

func (f *readOnlyFS) IsDir(path string) bool {
	if f.secure("stat", path) != nil {
		return false
	}
	info, err := f.fs.Stat(abs(path))
	return err == nil && info.IsDir()
}

func (f *readOnlyFS) ReadDir(path string) ([]string, error) {
	if err := f.secure("open", path); err != nil {
		return nil, err
	}
	entries, err := f.fs.ReadDir(abs(path))
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return names, nil
}

func (f *readOnlyFS) CleanedAbs(path string) (filesys.ConfirmedDir, string, error) {
	a, err := filepath.Abs(path)
	if err != nil {
		return "", "", fmt.Errorf("abs path error on '%s' : %v", path, err)
	}
	delinked, err := f.fs.EvalSymlinks(a)
	if err != nil {
		return "", "", fmt.Errorf("evalsymlink failure on '%s' : %w", path, err)
	}
	d, name := filesys.ConfirmedDir(delinked), ""
	if info, err := f.fs.Stat(delinked); err != nil || !info.IsDir() {
		d, name = filesys.ConfirmedDir(filepath.Dir(delinked)), filepath.Base(delinked)
	}
	if !d.HasPrefix(f.root) {
		return "", "", &constraintError{"abs", path, fmt.Errorf("path '%s' is not in or below '%s'", path, f.root)}
	}
	return d, name, nil
}

func (f *readOnlyFS) Exists(path string) bool {
	return f.secure("stat", path) == nil && inputfs.Exists(f.fs, abs(path))
}

// Glob matches as filepath.Glob does, and leaves out hidden files unless
// the pattern names them, as kustomize's file system on disk does.
func (f *readOnlyFS) Glob(pattern string) ([]string, error) {
	if _, err := filepath.Match(pattern, ""); err != nil {
		return nil, err
	}
	matches, err := f.glob(abs(pattern))
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range matches {
		if f.secure("glob", m) == nil {
			out = append(out, m)
		}
	}
	if filesys.IsHiddenFilePath(pattern) {
		return out, nil
	}
	return filesys.RemoveHiddenFiles(out), nil
}

func (f *readOnlyFS) glob(pattern string) ([]string, error) {
	if !strings.ContainsAny(pattern, `*?[\`) {
		if _, err := f.fs.Lstat(pattern); err != nil {
			return nil, nil
		}
		return []string{pattern}, nil
	}
	dir, file := filepath.Split(pattern)
	dir = filepath.Clean(dir)
	dirs := []string{dir}
	if strings.ContainsAny(dir, `*?[\`) {
		var err error
		if dirs, err = f.glob(dir); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, d := range dirs {
		entries, err := f.fs.ReadDir(d)
		if err != nil {
			continue
		}
		for _, e := range entries {
			if ok, _ := filepath.Match(file, e.Name()); ok {
				out = append(out, filepath.Join(d, e.Name()))
			}
		}
	}
	return out, nil
}

func (f *readOnlyFS) ReadFile(path string) ([]byte, error) {
	if err := f.secure("read", path); err != nil {
		return nil, err
	}
	return f.fs.ReadFile(abs(path), load.MaxFileBytes)
}

func (f *readOnlyFS) Walk(path string, walkFn filepath.WalkFunc) error {
	return f.fs.WalkDir(abs(path), func(p string, d fs.DirEntry, err error) error {
		if serr := f.secure("walk", p); serr != nil {
			return serr
		}
		if err != nil {
			return walkFn(p, nil, err)
		}
		info, err := d.Info()
		return walkFn(p, info, err)
	})
}

// abs is path made absolute: kustomize names files relative to the
// kustomization's directory, which it has made absolute already.
func abs(path string) string {
	a, err := filepath.Abs(path)
	if err != nil {
		return filepath.Clean(path)
	}
	return a
}

// readOnlyFile is a file's content, read whole as the disk's file system
// would have kustomize read it.
type readOnlyFile struct {
	*bytes.Reader
	info fs.FileInfo
}

func (f *readOnlyFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (f *readOnlyFile) Close() error              { return nil }
func (f *readOnlyFile) Stat() (fs.FileInfo, error) {
	return f.info, nil
}
