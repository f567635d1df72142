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
	// Spin until the process has used 10ms of CPU. On a loaded machine
	// that takes longer than 10ms of wall time, but it does end, unless
	// CPUTime does not count the spinning.
	before := CPUTime()
	deadline := time.Now().Add(time.Minute)
	for CPUTime()-before < 10*time.Millisecond {
		if time.Now().After(deadline) {
			t.Fatalf("CPU time grew by %s in a minute of spinning", CPUTime()-before)
		}
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
