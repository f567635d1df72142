package compiler

import (
	"runtime"
	"testing"
)

// TestLoadHoldsLittleMemoryPerInputByte bounds the heap a loaded project
// holds per byte of input, for objects made of many tiny scalars, where
// each byte or two of input becomes a node, and what loading allocates,
// which bounds the heap's peak. The parsed yaml.v3 nodes held 90 bytes
// per input byte for a flow list of one-digit numbers, and parsing with
// yaml.v3 allocated 149 (45 to 56 for the other layouts); the compact
// reader allocates 25 (8 to 11). The bounds leave room for the compact
// form to grow, not for yaml.v3's nodes to come back. BenchmarkLoadMemory
// reports the same figures as live-B/in-B and alloc-B/in-B.
func TestLoadHoldsLittleMemoryPerInputByte(t *testing.T) {
	const scalars = 200_000
	for _, c := range []struct {
		layout string
		// bound is on the heap held after Load; allocBound on what
		// Load allocates, which bounds the heap's peak while it runs.
		bound, allocBound float64
	}{
		{"flow-sequence", 40, 30},
		{"block-sequence", 15, 15},
		{"block-mapping", 15, 15},
		{"flow-mapping", 15, 15},
	} {
		t.Run(c.layout, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeNodeHeavy(dir, c.layout, scalars); err != nil {
				t.Fatal(err)
			}
			input := inputBytes(t, dir)
			before := liveHeap()
			allocatedBefore := totalAlloc()
			res, err := Load(Options{Paths: []string{dir}, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid() {
				t.Fatalf("invalid: %v", res.Diagnostics)
			}
			allocated := float64(totalAlloc()-allocatedBefore) / float64(input)
			after := liveHeap()
			held := float64(after-min(before, after)) / float64(input)
			runtime.KeepAlive(res)
			t.Logf("%.1f bytes of heap held and %.1f allocated per input byte (%d input bytes)", held, allocated, input)
			if held > c.bound {
				t.Errorf("Load holds %.1f bytes of heap per input byte, want at most %.0f", held, c.bound)
			}
			if allocated > c.allocBound {
				t.Errorf("Load allocates %.1f bytes per input byte, want at most %.0f", allocated, c.allocBound)
			}
		})
	}
}
