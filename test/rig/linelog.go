package rig

import (
	"bufio"
	"io"
	"strings"
	"sync"
)

// lineLog keeps what a child process writes to stderr, line by line, and
// shows each line to watch as it arrives, so that a test can wait for the
// line that says the process is ready. A long run logs a lot, so only the
// last lines are kept; counts a test relies on belong in watch.
type lineLog struct {
	mu    sync.Mutex
	lines []string
	watch func(line string)
}

const lineLogKeep = 5000

// consume reads r until it ends; a line longer than 1 MiB ends the reading
// early, which a test would see as a missing readiness line.
func (l *lineLog) consume(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		l.mu.Lock()
		if len(l.lines) >= lineLogKeep {
			l.lines = append(l.lines[:0], l.lines[lineLogKeep/2:]...)
		}
		l.lines = append(l.lines, line)
		l.mu.Unlock()
		if l.watch != nil {
			l.watch(line)
		}
	}
}

func (l *lineLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}
