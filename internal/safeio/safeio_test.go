package safeio

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
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
