// Package parallel runs the iterations of a loop on several goroutines.
// The compiler loads, checks and renders tens of thousands of independent
// objects; each stage spreads them over the machine's CPUs this way.
//
// It imports nothing of knc's. It sits in the module's top-level internal
// directory, beside the other leaves (internal/knative), rather than under
// compiler/internal, because package plugins, a compiler back end kept at
// the top of the tree (see its doc), uses it too.
package parallel

import (
	"runtime"
	"sync"
	"sync/atomic"
)

// For runs fn(i) for every i in [0, n) on up to GOMAXPROCS goroutines
// and returns when all have returned. Iterations are handed out one at a
// time, so that uneven ones balance out.
func For(n int, fn func(int)) { ForWorkers(n, runtime.GOMAXPROCS(0), fn) }

// ForWorkers is For on up to workers goroutines: more than the CPUs for
// work that waits (writing files), fewer to bound memory.
func ForWorkers(n, workers int, fn func(int)) {
	workers = min(workers, n)
	if workers <= 1 {
		for i := range n {
			fn(i)
		}
		return
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	var failed atomic.Pointer[workerPanic]
	for range workers {
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					failed.CompareAndSwap(nil, &workerPanic{r})
					// The other workers stop at their next item.
					next.Store(int64(n))
				}
			}()
			for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
				fn(i)
			}
		})
	}
	wg.Wait()
	if p := failed.Load(); p != nil {
		// Raised again on the caller's goroutine, where a recover at
		// the program's boundary can catch it; on a worker's it would
		// end the process.
		panic(p.value)
	}
}

type workerPanic struct{ value any }
