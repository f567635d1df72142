package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go/jetstream"
)

func TestMissingAfter(t *testing.T) {
	tests := []struct {
		name  string
		state jetstream.StreamState
		after uint64
		want  uint64
	}{
		{"nothing after the position", jetstream.StreamState{FirstSeq: 1, LastSeq: 10}, 10, 0},
		{"position beyond the last", jetstream.StreamState{FirstSeq: 1, LastSeq: 10}, 12, 0},
		{"all held", jetstream.StreamState{FirstSeq: 1, LastSeq: 10}, 4, 0},
		{"a cut tail", jetstream.StreamState{FirstSeq: 1, LastSeq: 10, Deleted: []uint64{6, 7, 8, 9, 10}}, 4, 5},
		{"deleted before the position are not counted", jetstream.StreamState{FirstSeq: 1, LastSeq: 10, Deleted: []uint64{2, 3, 9}}, 4, 1},
		{"gone before the first held", jetstream.StreamState{FirstSeq: 8, LastSeq: 10}, 4, 3},
		{"everything gone", jetstream.StreamState{FirstSeq: 11, LastSeq: 10}, 4, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, missingAfter(tt.state, tt.after)); diff != "" {
				t.Errorf("missingAfter (-want +got):\n%s", diff)
			}
		})
	}
}
