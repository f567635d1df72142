package safeio

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
	"testing/iotest"
)

type zeros struct{}

func (zeros) Read(p []byte) (int, error) { clear(p); return len(p), nil }

// TestReadAllStopsAtTheLimit reads an endless stream, as `knc route --event
// -` reading /dev/zero on its standard input would.
func TestReadAllStopsAtTheLimit(t *testing.T) {
	_, err := ReadAll(zeros{}, "standard input", 1<<20)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadAll = %v, want %v", err, ErrTooLarge)
	}
	b, err := ReadAll(io.LimitReader(zeros{}, 1<<20), "standard input", 1<<20)
	if err != nil || len(b) != 1<<20 {
		t.Fatalf("ReadAll of exactly the limit = %d bytes, %v", len(b), err)
	}
}

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	regular := filepath.Join(dir, "a.yaml")
	if err := os.WriteFile(regular, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, path string
		limit      int64
		want       error
	}{
		{"regular file", regular, 10, nil},
		{"regular file above the limit", regular, 9, ErrTooLarge},
		{"FIFO, with no writer", fifo, 10, ErrNotRegular},
		{"character device", "/dev/zero", 10, ErrNotRegular},
		{"directory", dir, 10, ErrNotRegular},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := ReadFile(tt.path, tt.limit)
			if !errors.Is(err, tt.want) {
				t.Errorf("ReadFile(%s) = %v, want %v", tt.path, err, tt.want)
			}
		})
	}
}

func TestWithin(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "project")
	for _, d := range []string{filepath.Join(root, "sub"), filepath.Join(dir, "outside")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{filepath.Join(root, "sub", "a.cue"), filepath.Join(dir, "outside", "secret.json")} {
		if err := os.WriteFile(f, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	links := map[string]string{
		"inside.cue":  "sub/a.cue",
		"outside.cue": "../outside/secret.json",
		"abs.cue":     filepath.Join(dir, "outside", "secret.json"),
		"dir":         "../outside",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		path string
		want error
	}{
		{filepath.Join(root, "sub", "a.cue"), nil},
		{filepath.Join(root, "inside.cue"), nil},
		{filepath.Join(root, "outside.cue"), ErrLinkOutside},
		{filepath.Join(root, "abs.cue"), ErrLinkOutside},
		{filepath.Join(root, "dir", "secret.json"), ErrLinkOutside},
		{filepath.Join(root, "missing.cue"), os.ErrNotExist},
	}
	for _, tt := range tests {
		if err := Within(root, tt.path); !errors.Is(err, tt.want) || (err == nil) != (tt.want == nil) {
			t.Errorf("Within(%s) = %v, want %v", tt.path, err, tt.want)
		}
	}
}

// TestReadAllHoldsAboutTheLimit: an endless standard input refused at
// its limit was read into one buffer grown again and again, each smaller
// one left behind, until 2.8 GB had been taken for a limit of 1 GiB.
// Read in chunks, it allocates the limit and little more.
func TestReadAllHoldsAboutTheLimit(t *testing.T) {
	const limit = 64 << 20
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := ReadAll(zeros{}, "standard input", limit)
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("ReadAll = %v, want %v", err, ErrTooLarge)
	}
	if allocated := after.TotalAlloc - before.TotalAlloc; allocated > limit+limit/8 {
		t.Errorf("reading an endless stream to a limit of %d bytes allocated %d", limit, allocated)
	}
}

// TestReadAllJoinsItsChunks reads a stream of several chunks back whole.
func TestReadAllJoinsItsChunks(t *testing.T) {
	want := make([]byte, 3*(64<<10)+17)
	for i := range want {
		want[i] = byte(i * 7)
	}
	got, err := ReadAll(iotest.OneByteReader(bytes.NewReader(want)), "stream", int64(len(want)))
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("ReadAll = %d bytes, %v; want the %d written", len(got), err, len(want))
	}
}
