//go:build unix

package procstat

import (
	"runtime"
	"testing"
	"time"
)

// TestCPUTimeGrows checks that spinning shows in the CPU time, and that
// the peak resident set covers memory the test has touched.
func TestCPUTimeGrows(t *testing.T) {
	before := CPUTime()
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
	}
	if got := CPUTime() - before; got < 10*time.Millisecond {
		t.Errorf("CPU time grew by %s while the test spun for 50ms", got)
	}
	buf := make([]byte, 64<<20)
	for i := range buf {
		if i%4096 == 0 {
			buf[i] = 1
		}
	}
	runtime.KeepAlive(buf)
	if got := PeakRSS(); got < 64<<20 {
		t.Errorf("peak RSS %d bytes, below the 64 MiB just touched", got)
	}
}
