package natsserver

import (
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// A JetStream file store that fails a write (the volume is full) refuses
// every write after it, for good: the embedded server never clears the
// error, and publishes to that stream go unanswered. The runtime would
// refuse every event until restarted. So the Server notices the failure,
// reports it (StoreFault), and once the volume has room again restarts
// JetStream, which reopens every stream from its files with the error
// cleared. Events JetStream acknowledged before the failure are in those
// files; those it did not acknowledge were answered 503.

// ErrStorageFull is the StoreFault of a store whose volume is full.
var ErrStorageFull = errors.New("the store's volume is full (no space left on device)")

// storeWriteFailure tells whether a line the server logs reports a write
// that failed for lack of space. The server reports such failures only in
// its log and its error replies, both worded like this.
func storeWriteFailure(line string) bool {
	return strings.Contains(line, "no space left on device")
}

// recoveryInterval is how often the store's volume is checked: for room,
// while the store is faulted, and for lack of it otherwise.
const recoveryInterval = 250 * time.Millisecond

// fullBelow is the room under which the store's volume counts as full,
// whatever JetStream reported.
const fullBelow = 1 << 20

// faultState is shared by the Server and its log adapter.
type faultState struct {
	err atomic.Pointer[error]
	// changed is called, when set, each time the fault is set or cleared.
	changed func(err error)
}

func (f *faultState) set(err error) {
	if f.err.Swap(&err) == nil && f.changed != nil {
		f.changed(err)
	}
}

func (f *faultState) clear() {
	if f.err.Swap(nil) != nil && f.changed != nil {
		f.changed(nil)
	}
}

func (f *faultState) get() error {
	if p := f.err.Load(); p != nil {
		return *p
	}
	return nil
}

// StoreFault returns why JetStream refuses writes now, nil when it takes
// them.
func (s *Server) StoreFault() error { return s.fault.get() }

// recoverStore waits for room on the store's volume while the store is
// faulted, then restarts JetStream, until quit is closed. A volume with
// less than fullBelow free faults the store by itself.
func (s *Server) recoverStore(quit <-chan struct{}) {
	tick := time.NewTicker(recoveryInterval)
	defer tick.Stop()
	for {
		select {
		case <-quit:
			return
		case <-tick.C:
		}
		free := freeBytes(s.storeDir)
		if s.fault.get() == nil {
			if free >= 0 && free < fullBelow {
				// Not every write that fails for lack of space is logged
				// with its cause: a stream can stop answering with no
				// line saying why. A volume this full is a fault whether
				// JetStream said so or not.
				s.fault.set(ErrStorageFull)
				s.log.Warn("the store's volume is full; JetStream is restarted once it has room", "free_bytes", free)
			}
			continue
		}
		if free < s.roomNeeded {
			continue
		}
		if err := s.restartJetStream(); err != nil {
			s.log.Warn("restarting JetStream after a full volume failed; trying again", "error", err)
			continue
		}
		s.fault.clear()
		s.log.Info("JetStream restarted: the store's volume has room again")
	}
}

// restartJetStream stops JetStream, keeping its files, and starts it again
// with the configuration it ran with.
func (s *Server) restartJetStream() error {
	if err := s.ns.ShutdownJetStream(); err != nil {
		return fmt.Errorf("stopping JetStream: %w", err)
	}
	cfg := s.jsConfig
	// EnableJetStream adds the jetstream directory to the one it is given.
	cfg.StoreDir = s.storeDir
	if err := s.ns.EnableJetStream(&cfg); err != nil {
		return fmt.Errorf("starting JetStream: %w", err)
	}
	if !s.ns.JetStreamEnabled() {
		return errors.New("starting JetStream: not enabled")
	}
	return nil
}

// freeBytes is the room left for an unprivileged writer on the volume of
// dir, -1 when it cannot be told.
func freeBytes(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
