package engine

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestGCNearness(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms ...int) []time.Time {
		var ts []time.Time
		for _, m := range ms {
			ts = append(ts, t0.Add(time.Duration(m)*time.Millisecond))
		}
		return ts
	}
	many := make([]int, gcHistory)
	for i := range many {
		many[i] = 600 + i
	}
	for _, tc := range []struct {
		name     string
		slow, gc []time.Time
		to       int
		want     nearness
	}{
		{name: "no collection", slow: at(10, 500), to: 1000, want: nearness{}},
		{
			name: "one collection, one of two slow requests near it",
			slow: at(110, 500), gc: at(100), to: 1000,
			want: nearness{cycles: 1, slowShare: 0.5, timeShare: 0.04},
		},
		{
			name: "overlapping radii count once",
			slow: at(95, 125), gc: at(100, 110), to: 1000,
			want: nearness{cycles: 2, slowShare: 1, timeShare: 0.05},
		},
		{
			name: "radii are cut at the window's ends",
			slow: at(1), gc: at(5, 995), to: 1000,
			want: nearness{cycles: 2, slowShare: 1, timeShare: 0.05},
		},
		{
			name: "collections and requests outside the window do not count",
			slow: at(-5, 1005), gc: at(-10, 1010), to: 1000,
			want: nearness{},
		},
		{
			name: "a full history counts only the part of the window it covers",
			slow: at(100, 700), gc: at(many...), to: 1000,
			// From 600 (the oldest collection kept) to 1000, all within 20
			// ms of a collection except from 875 to 1000.
			want: nearness{cycles: gcHistory, slowShare: 1, timeShare: 275.0 / 400},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := gcNearness(tc.slow, tc.gc, t0, t0.Add(time.Duration(tc.to)*time.Millisecond), 20*time.Millisecond)
			if diff := cmp.Diff(tc.want, got, cmp.AllowUnexported(nearness{}), cmpopts.EquateApprox(0, 1e-9)); diff != "" {
				t.Errorf("gcNearness (-want +got):\n%s", diff)
			}
		})
	}
}
