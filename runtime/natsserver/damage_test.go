package natsserver

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDamagedStreams(t *testing.T) {
	const a, b = "js/$G/streams/a/msgs/1.blk", "js/$G/streams/b/msgs/3.blk"
	tests := []struct {
		name          string
		before, after map[string]int64
		want          map[string]bool
	}{
		{"unchanged", map[string]int64{a: 100, b: 50}, map[string]int64{a: 100, b: 50}, map[string]bool{}},
		{"grown by a write", map[string]int64{a: 100}, map[string]int64{a: 120}, map[string]bool{}},
		// A block removed as it started held only deleted messages.
		{"removed", map[string]int64{a: 100}, map[string]int64{}, map[string]bool{}},
		{"new", map[string]int64{}, map[string]int64{a: 10}, map[string]bool{}},
		{"cut", map[string]int64{a: 100, b: 50}, map[string]int64{a: 100, b: 20}, map[string]bool{"b": true}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, damagedStreams(tc.before, tc.after)); diff != "" {
				t.Errorf("damaged streams (-want +got):\n%s", diff)
			}
		})
	}
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
