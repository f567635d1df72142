// Package graphvizcache keeps go-graphviz from loading compiled code from
// a directory other users can write.
//
// go-graphviz compiles its WebAssembly module in a package init, and keeps
// the machine code in os.TempDir()/go-graphviz, which it creates if need
// be and otherwise trusts whoever made it: a cache planted in a shared
// /tmp by another local user would be run by knc, as whoever runs knc.
// The directory is chosen inside that init, from TMPDIR, before main
// runs. This package's init runs first (it imports only the standard
// library, and Go initializes a package whose imports are ready in the
// order of import paths: github.com/knc-dev sorts before the wazero
// packages go-graphviz's init waits for), and points TMPDIR at a directory
// only the user can write: DIR/knc in the user's cache directory, created
// with mode 0700 and refused unless it is a directory the user owns that
// nobody else can write. When there is none, TMPDIR points where nothing
// can be created, and go-graphviz compiles without a cache. Restore puts
// TMPDIR back; the package that imports go-graphviz calls it in its own
// init, which runs after go-graphviz's.
//
// A binary that draws must import this package before it imports
// go-graphviz's: internal/topology/layout does, and a test checks that the
// cache never lands in TMPDIR.
package graphvizcache

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// noCache is a directory that cannot be made: go-graphviz then compiles
// without a cache.
const noCache = "/nonexistent/knc-graphviz-cache-disabled"

var original, hadOriginal = os.LookupEnv("TMPDIR")

func init() {
	// go-graphviz keeps its cache in dir/go-graphviz.
	dir, err := choose()
	if err != nil {
		dir = noCache
	}
	_ = os.Setenv("TMPDIR", dir)
}

// Restore puts back the TMPDIR the process started with.
func Restore() {
	if hadOriginal {
		_ = os.Setenv("TMPDIR", original)
	} else {
		_ = os.Unsetenv("TMPDIR")
	}
}

// choose returns the private directory for go-graphviz's cache, creating
// it, or an error when there is none.
func choose() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache directory for the user: %w", err)
	}
	dir := filepath.Join(base, "knc")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	if err := private(dir); err != nil {
		return "", err
	}
	// go-graphviz makes go-graphviz below dir itself; one made before by
	// someone else is refused too.
	if err := private(filepath.Join(dir, "go-graphviz")); err != nil && !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	return dir, nil
}

// private checks that path is a directory, not a link, owned by the user,
// that no one else can write.
func private(path string) error {
	info, err := os.Lstat(path)
	if err != nil {
		return err
	}
	if !info.IsDir() {
		return fmt.Errorf("%s is not a directory", path)
	}
	if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return fmt.Errorf("%s is owned by user %d, not by this user", path, st.Uid)
	}
	if info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s can be written by others (mode %v)", path, info.Mode().Perm())
	}
	return nil
}
