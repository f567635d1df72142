package natsserver

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestFullVolumeIsAFaultWithoutAFailedWrite fills the store's volume while
// JetStream writes nothing, as when a stream stops answering on a full
// volume without logging why: the store must still be reported faulted,
// and cleared once the volume has room again.
func TestFullVolumeIsAFaultWithoutAFailedWrite(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "small")
	if err := os.Mkdir(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
		t.Skipf("mounting a tmpfs is not possible here (%v): a full volume cannot be made without it", err)
	}
	t.Cleanup(func() { _ = syscall.Unmount(dir, 0) })
	s := startServer(t, Options{StoreDir: dir})
	if err := s.StoreFault(); err != nil {
		t.Fatalf("a fresh store is faulted: %v", err)
	}

	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	waitFor(t, "the full volume to be reported", func() bool { return errors.Is(s.StoreFault(), ErrStorageFull) })
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the fault to clear once the volume has room", func() bool { return s.StoreFault() == nil })
}

func fill(t *testing.T, path string) {
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
				t.Fatal(err)
			}
			return
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
