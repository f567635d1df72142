//go:build unix

// Package procstat reads what the operating system counts for this
// process, for benchmarks and load reports: CPU time says what a run costs
// on a shared machine whatever other jobs do to the wall clock.
package procstat

import (
	"runtime"
	"syscall"
	"time"
)

// CPUTime is the CPU time, user and system, that all threads of this
// process have used so far; 0 where the system does not say.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// ChildrenCPUTime is the CPU time, user and system, that the child
// processes this process has waited for have used, such as the git
// commands that read a revision; 0 where the system does not say.
func ChildrenCPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// PeakRSS is the most memory, in bytes, this process has held resident so
// far; 0 where the system does not say.
func PeakRSS() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	if runtime.GOOS == "darwin" {
		return ru.Maxrss // bytes on macOS
	}
	return ru.Maxrss * 1024 // kilobytes on Linux and the BSDs
}
