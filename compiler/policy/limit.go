package policy

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"time"
)

// Limits bound an evaluation of the policies. CUE has no loops, but a
// comprehension over a huge range, or a structure that doubles at every
// level, runs for minutes or takes all memory.
type Limits struct {
	// Timeout bounds compiling the files, and then checking all objects.
	Timeout time.Duration
	// Memory bounds how much the heap may grow while doing either.
	Memory uint64
}

// DefaultLimits leave room for 100,000 objects on a laptop.
var DefaultLimits = Limits{Timeout: 30 * time.Second, Memory: 2 << 30}

// watchInterval is how often the heap is measured: a runaway policy
// allocates some hundreds of MB a second, so the budget is overshot by
// little.
const watchInterval = 5 * time.Millisecond

const heapMetric = "/memory/classes/heap/objects:bytes"

func heapBytes() uint64 {
	s := []metrics.Sample{{Name: heapMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// guard runs work, and returns an error as soon as it exceeds the
// limits. CUE cannot be interrupted: the work goes on in its goroutine,
// and the caller is expected to report the error and exit. doing says
// what the work is busy with, for the message.
func (l Limits) guard(doing func() string, work func()) error {
	if l == (Limits{}) {
		l = DefaultLimits
	}
	done := make(chan struct{})
	base := heapBytes()
	go func() {
		defer close(done)
		work()
	}()
	var timeout <-chan time.Time
	if l.Timeout > 0 {
		t := time.NewTimer(l.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	tick := time.NewTicker(watchInterval)
	defer tick.Stop()
	for {
		select {
		case <-done:
			return nil
		case <-timeout:
			return fmt.Errorf("policy evaluation stopped after %s, its time limit, while %s: make the policy cheaper (a comprehension over a large range, or a structure that grows at every level, takes this long), or raise --policy-timeout", l.Timeout, doing())
		case <-tick.C:
			if l.Memory == 0 {
				continue
			}
			if used := heapBytes(); used > base && used-base > l.Memory {
				// Garbage counts too until it is collected; collect
				// once before giving up.
				runtime.GC()
				if used = heapBytes(); used > base && used-base > l.Memory {
					return fmt.Errorf("policy evaluation stopped when it grew the heap by %d MiB, over its limit of %d MiB, while %s: make the policy smaller (a list or structure that grows without bound takes this much), or raise --policy-memory", (used-base)>>20, l.Memory>>20, doing())
				}
			}
		}
	}
}
