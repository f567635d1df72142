//go:build !unix

package procstat

import "time"

// CPUTime is 0: this system's CPU accounting is not read.
func CPUTime() time.Duration { return 0 }

// ChildrenCPUTime is 0: this system's CPU accounting is not read.
func ChildrenCPUTime() time.Duration { return 0 }

// PeakRSS is 0: this system's memory accounting is not read.
func PeakRSS() int64 { return 0 }
