package ping

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"
)

// Clock is the time the scheduler fires by.
type Clock interface {
	// Now is the current time.
	Now() (time.Time, error)
	// SleepUntil returns once Now reads t or later, or ctx ends.
	SleepUntil(ctx context.Context, t time.Time) error
}

// WallClock is the machine's clock.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() (time.Time, error) { return time.Now(), nil }

// SleepUntil waits until t with a timer.
func (WallClock) SleepUntil(ctx context.Context, t time.Time) error {
	timer := time.NewTimer(time.Until(t))
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// FileClock is a clock for tests: the time is what its file says, an
// RFC 3339 time that the test rewrites to step the clock. Every runtime
// reading one file sees the same time, which lets a test step several
// replicas through the same ticks. It is not meant for production.
type FileClock struct {
	Path string
	// Poll is how often SleepUntil reads the file; 20ms when zero.
	Poll time.Duration
}

// Now reads the file.
func (c FileClock) Now() (time.Time, error) {
	b, err := os.ReadFile(c.Path)
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the test clock: %w", err)
	}
	t, err := time.Parse(time.RFC3339Nano, strings.TrimSpace(string(b)))
	if err != nil {
		return time.Time{}, fmt.Errorf("reading the test clock %s: %w", c.Path, err)
	}
	return t, nil
}

// SleepUntil reads the file until it says t or later. A file that cannot
// be read, as while a test rewrites it, is read again.
func (c FileClock) SleepUntil(ctx context.Context, t time.Time) error {
	poll := c.Poll
	if poll <= 0 {
		poll = 20 * time.Millisecond
	}
	ticker := time.NewTicker(poll)
	defer ticker.Stop()
	for {
		if now, err := c.Now(); err == nil && !now.Before(t) {
			return nil
		}
		select {
		case <-ticker.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}
