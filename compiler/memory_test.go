package compiler

import (
	"runtime"
	"testing"
)

// TestLoadHoldsLittleMemoryPerInputByte bounds the heap a loaded project
// holds per byte of input, for objects made of many tiny scalars, where
// each byte or two of input becomes a node. The parsed yaml.v3 nodes held
// 90 bytes per input byte for a flow list of one-digit numbers; the
// bounds leave room for the compact form to grow, not for those nodes to
// come back. BenchmarkLoadMemory reports the same figure as live-B/in-B.
func TestLoadHoldsLittleMemoryPerInputByte(t *testing.T) {
	const scalars = 200_000
	for _, c := range []struct {
		layout string
		bound  float64
	}{
		{"flow-sequence", 40},
		{"block-sequence", 15},
		{"block-mapping", 15},
		{"flow-mapping", 15},
	} {
		t.Run(c.layout, func(t *testing.T) {
			dir := t.TempDir()
			if err := writeNodeHeavy(dir, c.layout, scalars); err != nil {
				t.Fatal(err)
			}
			input := inputBytes(t, dir)
			before := liveHeap()
			res, err := Load(Options{Paths: []string{dir}, Dir: dir})
			if err != nil {
				t.Fatal(err)
			}
			if !res.Valid() {
				t.Fatalf("invalid: %v", res.Diagnostics)
			}
			after := liveHeap()
			held := float64(after-min(before, after)) / float64(input)
			runtime.KeepAlive(res)
			t.Logf("%.1f bytes of heap held per input byte (%d input bytes)", held, input)
			if held > c.bound {
				t.Errorf("Load holds %.1f bytes of heap per input byte, want at most %.0f", held, c.bound)
			}
		})
	}
}
