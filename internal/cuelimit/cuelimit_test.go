package cuelimit

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"
)

// grow allocates and keeps 1 MiB blocks until stop is closed or it holds
// max of them, so that a test never takes more than max MiB whatever
// Guard does.
func grow(stop <-chan struct{}, max int) func() {
	return func() {
		var kept [][]byte
		defer runtime.KeepAlive(&kept)
		for len(kept) < max {
			select {
			case <-stop:
				return
			default:
			}
			kept = append(kept, make([]byte, 1<<20))
			time.Sleep(100 * time.Microsecond)
		}
		<-stop
		runtime.KeepAlive(kept)
	}
}

func TestGuardReturnsWhenWorkEnds(t *testing.T) {
	ran := false
	err := Limits{Timeout: time.Minute, Memory: 1 << 30}.Guard(Task{Name: "evaluation"}, func() { ran = true })
	if err != nil || !ran {
		t.Fatalf("Guard = %v, ran %v; want nil after running the work", err, ran)
	}
}

func TestGuardStopsAtTheTimeLimit(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	task := Task{Name: "evaluation of x.cue", Subject: "the file", Doing: func() string { return "evaluating x.cue" }}
	err := Limits{Timeout: 20 * time.Millisecond}.Guard(task, func() { <-stop })
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.Timeout != 20*time.Millisecond {
		t.Fatalf("Guard = %v; want *Exceeded at the 20ms time limit", err)
	}
	want := "evaluation of x.cue stopped after 20ms, its time limit, while evaluating x.cue: make the file cheaper (a comprehension over a large range, or a structure that grows at every level, takes this long), or raise --cue-timeout"
	if err.Error() != want {
		t.Errorf("error:\n got %s\nwant %s", err, want)
	}
}

func TestGuardStopsAtTheMemoryLimit(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	runtime.GC()
	task := Task{Name: "evaluation of plugin p", Subject: "the plugin"}
	err := Limits{Timeout: time.Minute, Memory: 16 << 20}.Guard(task, grow(stop, 256))
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.Memory != 16<<20 || ex.Grew <= 16<<20 {
		t.Fatalf("Guard = %v; want *Exceeded over the 16 MiB memory limit", err)
	}
	if !strings.HasPrefix(err.Error(), "evaluation of plugin p stopped when it grew the heap by ") ||
		!strings.HasSuffix(err.Error(), " MiB, over its limit of 16 MiB: make the plugin smaller (a list or structure that grows without bound takes this much), or raise --cue-memory") {
		t.Errorf("error = %s", err)
	}
}

// An evaluation counts the growth of the whole process, so that
// evaluations running at once are bounded together, and the error says
// that others were running.
func TestGuardCountsConcurrentEvaluations(t *testing.T) {
	stop := make(chan struct{})
	defer close(stop)
	// Garbage of the tests before would be collected while b grows,
	// hiding its growth.
	runtime.GC()
	other := func() {
		_ = Limits{Timeout: time.Minute}.Guard(Task{Name: "evaluation b"}, grow(stop, 64))
	}
	// a starts b, and allocates nothing itself.
	err := Limits{Timeout: 10 * time.Second, Memory: 16 << 20}.Guard(Task{Name: "evaluation a"}, func() {
		go other()
		<-stop
	})
	var ex *Exceeded
	if !errors.As(err, &ex) || ex.Others != 1 {
		t.Fatalf("Guard = %v; want *Exceeded with one other evaluation running", err)
	}
	if !strings.Contains(err.Error(), " (one other CUE evaluation was running at the same time, and counts too): ") {
		t.Errorf("error = %s", err)
	}
}

func TestZeroLimitsAreTheDefault(t *testing.T) {
	stop := make(chan struct{})
	close(stop)
	if err := (Limits{}).Guard(Task{Name: "evaluation"}, grow(stop, 1)); err != nil {
		t.Fatalf("Guard = %v; want nil", err)
	}
}

// BenchmarkGuard measures what a guard adds to an evaluation that ends at
// once, as most manifests' do: each .cue file is evaluated under one.
func BenchmarkGuard(b *testing.B) {
	limits := Limits{Timeout: time.Minute, Memory: 1 << 30}
	n := 0
	for b.Loop() {
		if err := limits.Guard(Task{Name: "evaluation"}, func() { n++ }); err != nil {
			b.Fatal(err)
		}
	}
}
