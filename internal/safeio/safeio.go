// Package safeio reads the files knc is given, refusing what is not a
// regular file (a FIFO would block a read forever, a device such as
// /dev/zero never ends) and anything larger than a limit, so that no input
// can stall knc or exhaust its memory.
package safeio

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is returned for a path that is not a regular file.
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is returned for a file or stream larger than its limit.
var ErrTooLarge = errors.New("larger than the limit")

// ReadFile reads a regular file of at most limit bytes. It opens without
// blocking, so that a FIFO is refused instead of waited on, and checks the
// type of what it opened rather than of the path, so that nothing can be
// swapped in between.
func ReadFile(path string, limit int64) ([]byte, error) {
	return readFile(path, limit, 0)
}

// ReadFileNoFollow is ReadFile for a path that must not be a symbolic
// link: it fails for one rather than reading what it points to.
func ReadFileNoFollow(path string, limit int64) ([]byte, error) {
	return readFile(path, limit, syscall.O_NOFOLLOW)
}

func readFile(path string, limit int64, flags int) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK|flags, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, NotRegular(path, info.Mode())
	}
	if info.Size() > limit {
		return nil, fmt.Errorf("%s: %w of %d bytes (it holds %d)", path, ErrTooLarge, limit, info.Size())
	}
	// Sized to the file, and one byte more to see that it ends there.
	return readAll(f, path, limit, info.Size()+1)
}

// Chunks grow from the first size to the last, doubling, so that a small
// input takes a small buffer and a large one few of them.
const (
	firstChunk = 64 << 10
	lastChunk  = 8 << 20
)

// ReadAll reads r to its end, failing once more than limit bytes came.
//
// It reads into chunks that it never copies until the end, so that what
// it holds is at most about the limit: io.ReadAll grows one buffer,
// leaving each smaller one behind as garbage, and an endless standard
// input refused at 1 GiB took 2.8 GB first.
func ReadAll(r io.Reader, name string, limit int64) ([]byte, error) {
	return readAll(r, name, limit, firstChunk)
}

// readAll is ReadAll with a first chunk of size bytes.
func readAll(r io.Reader, name string, limit, size int64) ([]byte, error) {
	var chunks [][]byte
	var total int64
	for total <= limit {
		// One byte past the limit tells that there was more.
		buf := make([]byte, min(size, limit+1-total))
		n, err := io.ReadFull(r, buf)
		chunks = append(chunks, buf[:n])
		total += int64(n)
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			break
		}
		if err != nil {
			return nil, err
		}
		size = min(2*size, lastChunk)
	}
	if total > limit {
		return nil, fmt.Errorf("%s: %w of %d bytes", name, ErrTooLarge, limit)
	}
	if len(chunks) == 1 {
		return chunks[0], nil
	}
	out := make([]byte, 0, total)
	for i, c := range chunks {
		out = append(out, c...)
		chunks[i] = nil
	}
	return out, nil
}

// NotRegular is the error for a path of mode m that is not a regular file.
func NotRegular(path string, m os.FileMode) error {
	return fmt.Errorf("%s: %w (it is a %s); knc reads only regular files", path, ErrNotRegular, describe(m))
}

func describe(m os.FileMode) string {
	switch {
	case m.IsDir():
		return "directory"
	case m&os.ModeNamedPipe != 0:
		return "named pipe"
	case m&os.ModeSocket != 0:
		return "socket"
	case m&os.ModeCharDevice != 0:
		return "character device"
	case m&os.ModeDevice != 0:
		return "device"
	}
	return "special file"
}

// ErrLinkOutside is returned for a path whose symbolic links lead outside
// the directory it must stay in.
var ErrLinkOutside = errors.New("symbolic link leads outside the project root")

// Within returns an error wrapping ErrLinkOutside when path, its symbolic
// links resolved, is not below root, its own links resolved: a link in a
// repository must not bring in a file of the machine reading it.
func Within(root, path string) error {
	target, err := resolve(path)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	base, err := resolve(root)
	if err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	if rel, err := filepath.Rel(base, target); err != nil || rel != "." && !filepath.IsLocal(rel) {
		return fmt.Errorf("%s: %w %s (it leads to %s); copy the file into the project", path, ErrLinkOutside, base, target)
	}
	return nil
}

func resolve(p string) (string, error) {
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		return "", err
	}
	return filepath.Abs(r)
}
