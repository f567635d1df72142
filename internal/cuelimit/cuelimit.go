// Package cuelimit runs CUE evaluations under a time and memory budget.
// CUE has no loops, but a comprehension over a huge range, or a structure
// that doubles at every level, runs for minutes or takes all memory; knc
// evaluates CUE it did not write (manifests, plugins, policies), so every
// evaluation runs under Guard.
//
// CUE cannot be interrupted: an evaluation over its budget goes on in its
// goroutine. Guard returns an *Exceeded error at once; the program is
// expected to report it and exit, which is what stops the evaluation.
//
// The heap is measured for the whole process: an evaluation counts the
// growth since it started, whatever allocated it, so that evaluations
// running at the same time stay within the budget of the first of them
// together. The error then says how many others were running.
//
// It imports nothing of knc's, and sits in the module's top-level internal
// directory because compiler packages and plugins both use it.
package cuelimit

import (
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"time"
)

// Limits bound one evaluation.
type Limits struct {
	// Timeout bounds how long the evaluation runs; zero means no limit.
	Timeout time.Duration
	// Memory bounds how much the heap may grow while it runs; zero
	// means no limit.
	Memory uint64
}

// Default leaves room for 100,000 objects on a laptop. The zero Limits
// stands for it.
var Default = Limits{Timeout: 30 * time.Second, Memory: 2 << 30}

// Task says what an evaluation is, for the error.
type Task struct {
	// Name is the evaluation, such as "policy evaluation" or
	// "evaluation of plugin p (.knc/plugins/p)".
	Name string
	// Subject is what to make cheaper, such as "the policy".
	Subject string
	// Doing, when set, says what the evaluation is busy with at the
	// moment, such as the file or object; it is called from another
	// goroutine while the work runs.
	Doing func() string
}

// The command-line flags that raise the limits, named in the error.
const (
	TimeoutFlag = "--cue-timeout"
	MemoryFlag  = "--cue-memory"
)

// Exceeded is the error of an evaluation stopped by its limits. The
// evaluation still runs: the program must exit to stop it.
type Exceeded struct {
	Task  Task
	Doing string
	// Timeout is set when the time limit stopped the evaluation; Grew
	// and Memory when the memory limit did.
	Timeout      time.Duration
	Grew, Memory uint64
	// Others counts the other evaluations that were running at the
	// same time, whose growth counts too.
	Others int
}

func (e *Exceeded) Error() string {
	var b strings.Builder
	if e.Timeout > 0 {
		fmt.Fprintf(&b, "%s stopped after %s, its time limit", e.Task.Name, e.Timeout)
	} else {
		fmt.Fprintf(&b, "%s stopped when it grew the heap by %d MiB, over its limit of %d MiB", e.Task.Name, e.Grew>>20, e.Memory>>20)
	}
	if e.Doing != "" {
		fmt.Fprintf(&b, ", while %s", e.Doing)
	}
	switch {
	case e.Others == 1:
		b.WriteString(" (one other CUE evaluation was running at the same time, and counts too)")
	case e.Others > 1:
		fmt.Fprintf(&b, " (%d other CUE evaluations were running at the same time, and count too)", e.Others)
	}
	subject := e.Task.Subject
	if subject == "" {
		subject = "the CUE"
	}
	if e.Timeout > 0 {
		fmt.Fprintf(&b, ": make %s cheaper (a comprehension over a large range, or a structure that grows at every level, takes this long), or raise %s", subject, TimeoutFlag)
	} else {
		fmt.Fprintf(&b, ": make %s smaller (a list or structure that grows without bound takes this much), or raise %s", subject, MemoryFlag)
	}
	return b.String()
}

// watchInterval is how often the heap is measured: a runaway evaluation
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

// running counts the evaluations under way in the process.
var running atomic.Int32

// Guard runs work, and returns an *Exceeded error as soon as it goes
// over the limits; otherwise nil once work has returned. On an error,
// work goes on in its goroutine until it returns by itself.
func (l Limits) Guard(t Task, work func()) error {
	if l == (Limits{}) {
		l = Default
	}
	done := make(chan struct{})
	base := heapBytes()
	running.Add(1)
	go func() {
		// An evaluation over its budget still counts as running until
		// it returns: it still takes memory.
		defer running.Add(-1)
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
	doing := func() string {
		if t.Doing == nil {
			return ""
		}
		return t.Doing()
	}
	for {
		select {
		case <-done:
			return nil
		case <-timeout:
			return &Exceeded{Task: t, Doing: doing(), Timeout: l.Timeout}
		case <-tick.C:
			if l.Memory == 0 {
				continue
			}
			if used := heapBytes(); used > base && used-base > l.Memory {
				// Garbage counts too until it is collected; collect
				// once before giving up.
				runtime.GC()
				if used = heapBytes(); used > base && used-base > l.Memory {
					return &Exceeded{Task: t, Doing: doing(), Grew: used - base, Memory: l.Memory, Others: int(running.Load()) - 1}
				}
			}
		}
	}
}
