package parallel

import (
	"sync/atomic"
	"testing"
)

func TestForRunsEveryIterationOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {7, 1}, {1000, 3}, {5, 64}} {
		counts := make([]atomic.Int32, tc.n)
		ForWorkers(tc.n, tc.workers, func(i int) { counts[i].Add(1) })
		for i := range counts {
			if got := counts[i].Load(); got != 1 {
				t.Errorf("n=%d workers=%d: iteration %d ran %d times", tc.n, tc.workers, i, got)
			}
		}
	}
}

func TestForWaits(t *testing.T) {
	var done atomic.Int32
	For(100, func(int) { done.Add(1) })
	if got := done.Load(); got != 100 {
		t.Errorf("For returned after %d of 100 iterations", got)
	}
}

func TestForRaisesAWorkersPanicOnTheCaller(t *testing.T) {
	defer func() {
		if r := recover(); r != "item 7" {
			t.Errorf("recovered %v, want the worker's panic \"item 7\"", r)
		}
	}()
	ForWorkers(100, 4, func(i int) {
		if i == 7 {
			panic("item 7")
		}
	})
	t.Error("ForWorkers returned after a worker panicked")
}
