package natsserver

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDamagedStreams(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "jetstream", "$G", "streams", "a", "msgs", "1.blk")
	b := filepath.Join(dir, "jetstream", "$G", "streams", "b", "msgs", "3.blk")
	write := func(path string, n int) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		// change turns the blocks of 100 (a) and 50 bytes (b) into what
		// JetStream left once started.
		change func()
		want   map[string]bool
	}{
		{"unchanged", func() {}, map[string]bool{}},
		{"grown by a write", func() {
			f, err := os.OpenFile(a, os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.Write(make([]byte, 20))
			_ = f.Close()
		}, map[string]bool{}},
		// A block removed as it started held only deleted messages.
		{"removed", func() { _ = os.Remove(a) }, map[string]bool{}},
		{"cut in place", func() {
			if err := os.Truncate(b, 20); err != nil {
				t.Fatal(err)
			}
		}, map[string]bool{"b": true}},
		// Rewritten without the messages acknowledged before the stop.
		{"rewritten shorter as a new file", func() {
			write(b+".tmp", 20)
			if err := os.Rename(b+".tmp", b); err != nil {
				t.Fatal(err)
			}
		}, map[string]bool{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			write(a, 100)
			write(b, 50)
			before := blocks(dir)
			if len(before) != 2 {
				t.Fatalf("found %d blocks, want 2", len(before))
			}
			tc.change()
			if diff := cmp.Diff(tc.want, damagedStreams(before, blocks(dir))); diff != "" {
				t.Errorf("damaged streams (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("new", func(t *testing.T) {
		if diff := cmp.Diff(map[string]bool{}, damagedStreams(map[string]fs.FileInfo{}, blocks(dir))); diff != "" {
			t.Errorf("damaged streams (-want +got):\n%s", diff)
		}
	})
}

func TestStoreWriteFailure(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		// Worded as nats-server v2.15 logs a store that failed to write
		// (server/stream.go, "JetStream failed to store a msg").
		{"JetStream failed to store a msg on stream '$G > s': write /data/jetstream/$G/streams/s/msgs/1.blk: no space left on device", true},
		{"Filestore [s] Stream state outdated, last block has additional entries, will rebuild", false},
		{"JetStream resource limits exceeded for account: \"$G\"", false},
	}
	for _, tc := range tests {
		if got := storeWriteFailure(tc.line); got != tc.want {
			t.Errorf("storeWriteFailure(%q) = %v, want %v", tc.line, got, tc.want)
		}
	}
}
