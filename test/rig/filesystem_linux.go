package rig

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// SmallFilesystem mounts a tmpfs of size (such as "32m") at a fresh
// directory and unmounts it at the end of the test, after everything
// registered later (a runtime using it) has stopped. It skips the test
// where mounting is not allowed: a full volume cannot be made without it.
func SmallFilesystem(t testing.TB, size string) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("mounting a %s tmpfs for the data directory is not possible here (%v): a full volume cannot be made without it", size, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, 0); err != nil {
			t.Errorf("unmounting %s: %v", dir, err)
		}
	})
	return dir
}

// Fill writes a file at path until the filesystem refuses more.
func Fill(t testing.TB, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling %s: %v", path, err)
			}
			return
		}
	}
}
