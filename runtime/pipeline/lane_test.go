package pipeline

import (
	"context"
	"testing"
	"time"
)

// TestLaneCongestion: a target, or the whole lane, whose slots stayed taken
// for slotWait takes no first attempt while it is congested, even if a slot
// has come free meanwhile; deliveries are stored instead of waiting again.
func TestLaneCongestion(t *testing.T) {
	newTarget := func() *Target { return &Target{slots: make(chan struct{}, TargetSlots(2))} }
	var timer *time.Timer

	t.Run("target", func(t *testing.T) {
		l := NewLane(context.Background(), 4)
		l.congestion = time.Minute
		slow := newTarget()
		for range cap(slow.slots) {
			if !l.acquire(slow, &timer) {
				t.Fatal("a free slot was not taken")
			}
		}
		if l.acquire(slow, &timer) {
			t.Fatal("a target with no free slot took one more attempt")
		}
		l.release(slow)
		if l.acquire(slow, &timer) {
			t.Error("a congested target took an attempt")
		}
		if other := newTarget(); !l.acquire(other, &timer) {
			t.Error("another target is held back by a congested one")
		}
	})
	t.Run("lane", func(t *testing.T) {
		l := NewLane(context.Background(), 2)
		l.congestion = time.Minute
		a, b, c := newTarget(), newTarget(), newTarget()
		if !l.acquire(a, &timer) || !l.acquire(b, &timer) {
			t.Fatal("free slots were not taken")
		}
		if l.acquire(c, &timer) {
			t.Fatal("a lane with no free slot took one more attempt")
		}
		if len(c.slots) != 0 {
			t.Errorf("the target kept %d slots of an attempt that was not made", len(c.slots))
		}
		l.release(a)
		if l.acquire(c, &timer) {
			t.Error("a congested lane took an attempt")
		}
	})
}
