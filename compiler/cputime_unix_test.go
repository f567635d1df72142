//go:build unix

package compiler

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the process has used, in all its threads,
// user and system: what a run costs on a shared CI runner, whatever the
// other jobs do to the wall clock.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
