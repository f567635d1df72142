package natsserver

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// LockFile is the file in the store directory a running server holds an
// exclusive lock on, with its process ID inside.
const LockFile = "knc.lock"

// ErrStoreInUse is returned when another process holds the store
// directory: two servers writing the same JetStream files lose and
// duplicate events and corrupt the store.
var ErrStoreInUse = errors.New("store directory is in use")

// lockStore takes the lock of dir. The kernel releases it when the process
// ends, however it ends, so a killed runtime never leaves a stale lock.
func lockStore(dir string) (*os.File, error) {
	p := filepath.Join(dir, LockFile)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		b := make([]byte, 32)
		n, _ := f.ReadAt(b, 0)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			holder := strings.TrimSpace(string(b[:n]))
			if _, perr := strconv.Atoi(holder); perr != nil {
				holder = "unknown"
			}
			return nil, fmt.Errorf("%w: process %s holds %s; give each runtime its own --data-dir, or stop the other one", ErrStoreInUse, holder, p)
		}
		return nil, fmt.Errorf("locking %s: %w", p, err)
	}
	if err := f.Truncate(0); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}
