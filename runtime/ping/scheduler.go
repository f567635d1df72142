package ping

import (
	"context"
	"errors"
	"log/slog"
	"reflect"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/robfig/cron/v3"

	"github.com/knc-dev/knc/internal/routing"
)

// DefaultMaxLateness is how late a replica may fire a tick. It is well
// within the runtime's JetStream duplicate window (30s), so that a tick
// two replicas fire is stored once.
const DefaultMaxLateness = 10 * time.Second

// Fire stores the event of one tick of ps. It is called in a goroutine of
// its own and returns once the event is stored or given up; ctx ends when
// the scheduler stops.
type Fire func(ctx context.Context, ps *routing.PingSource, tick time.Time, ev *event.Event)

// Config configures a Scheduler.
type Config struct {
	Clock Clock
	Fire  Fire
	Log   *slog.Logger
	// MaxLateness bounds how late, by Clock, a tick is still fired;
	// DefaultMaxLateness when zero.
	MaxLateness time.Duration
	// Missed, when set, is called for each tick not fired because this
	// replica was late.
	Missed func(ps *routing.PingSource, tick time.Time)
}

// Scheduler fires the PingSources of the table it is given.
type Scheduler struct {
	cfg    Config
	ctx    context.Context
	cancel context.CancelFunc
	// fires counts the Fire calls in progress.
	fires sync.WaitGroup

	mu   sync.Mutex
	jobs map[string]*job
}

type job struct {
	ps     routing.PingSource
	cancel context.CancelFunc
	done   chan struct{}
}

// New returns a Scheduler that fires nothing until Update gives it
// PingSources.
func New(cfg Config) *Scheduler {
	if cfg.MaxLateness <= 0 {
		cfg.MaxLateness = DefaultMaxLateness
	}
	if cfg.Clock == nil {
		cfg.Clock = WallClock{}
	}
	if cfg.Log == nil {
		cfg.Log = slog.New(slog.DiscardHandler)
	}
	ctx, cancel := context.WithCancel(context.Background())
	return &Scheduler{cfg: cfg, ctx: ctx, cancel: cancel, jobs: map[string]*job{}}
}

// Update fires sources from now on: a PingSource that is new or changed
// starts from the next tick after now, one that is gone stops, one that is
// unchanged keeps its schedule. A PingSource whose schedule does not parse,
// or whose event cannot be made, is not fired: the result holds why, by
// namespace/name.
func (s *Scheduler) Update(sources []routing.PingSource) map[string]error {
	s.mu.Lock()
	defer s.mu.Unlock()
	errs := map[string]error{}
	if s.ctx.Err() != nil {
		for _, ps := range sources {
			errs[ps.Key()] = errors.New("ping: the scheduler is stopped")
		}
		return errs
	}
	keep := map[string]bool{}
	// Every job starts from the time of the update, not from whenever
	// its goroutine first runs.
	start, clockErr := s.cfg.Clock.Now()
	for i := range sources {
		ps := sources[i]
		key := ps.Key()
		if j, ok := s.jobs[key]; ok && reflect.DeepEqual(j.ps, ps) {
			keep[key] = true
			continue
		}
		sched, err := ParseSchedule(ps.Schedule, ps.Timezone)
		if err == nil {
			// An event that cannot be made is known now, not at the
			// first tick.
			_, err = NewEvent(&ps, time.Unix(0, 0))
		}
		if err != nil {
			// A changed PingSource that is now wrong stops.
			s.stopJob(key)
			errs[key] = err
			continue
		}
		s.stopJob(key)
		ctx, cancel := context.WithCancel(s.ctx)
		j := &job{ps: ps, cancel: cancel, done: make(chan struct{})}
		s.jobs[key] = j
		keep[key] = true
		go s.run(ctx, j, sched, start, clockErr == nil)
	}
	for key := range s.jobs {
		if !keep[key] {
			s.stopJob(key)
		}
	}
	return errs
}

// Running reports whether PingSource namespace/name is being fired.
func (s *Scheduler) Running(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.jobs[key]
	return ok
}

func (s *Scheduler) stopJob(key string) {
	if j, ok := s.jobs[key]; ok {
		j.cancel()
		<-j.done
		delete(s.jobs, key)
	}
}

// Stop stops firing, cancels the Fire calls in progress and waits for
// them.
func (s *Scheduler) Stop() {
	s.mu.Lock()
	for key := range s.jobs {
		s.stopJob(key)
	}
	s.cancel()
	s.mu.Unlock()
	s.fires.Wait()
}

// run fires the ticks of j until ctx ends. It starts from the first tick
// after now, read when the job was added unless known is false: ticks that passed before are not caught up. When the clock
// has passed several ticks at once (a replica that was stopped, a test
// clock stepped far), only the last of them is fired, and only if it is
// at most MaxLateness late: an earlier one was fired by another replica,
// or by nobody, and firing it now could outlast JetStream's duplicate
// window.
func (s *Scheduler) run(ctx context.Context, j *job, sched cron.Schedule, now time.Time, known bool) {
	defer close(j.done)
	log := s.cfg.Log.With("pingsource", j.ps.Key())
	if !known {
		var ok bool
		if now, ok = s.now(ctx, log); !ok {
			return
		}
	}
	next := sched.Next(now)
	for {
		if err := s.cfg.Clock.SleepUntil(ctx, next); err != nil {
			return
		}
		var ok bool
		if now, ok = s.now(ctx, log); !ok {
			return
		}
		tick := LastTick(sched, next, now)
		if late := now.Sub(tick); late > s.cfg.MaxLateness {
			log.Warn("not firing a tick: this replica is too late for it", "tick", tick, "late", late)
			if s.cfg.Missed != nil {
				s.cfg.Missed(&j.ps, tick)
			}
		} else {
			s.fire(ctx, &j.ps, tick, log)
		}
		next = sched.Next(now)
	}
}

// LastTick is the last tick of sched from first (a tick) up to now.
func LastTick(sched cron.Schedule, first, now time.Time) time.Time {
	tick := first
	// A clock far ahead is not walked tick by tick: the last ticks are
	// too late anyway.
	for range 10000 {
		n := sched.Next(tick)
		if n.After(now) || n.IsZero() {
			break
		}
		tick = n
	}
	return tick
}

func (s *Scheduler) now(ctx context.Context, log *slog.Logger) (time.Time, bool) {
	for {
		now, err := s.cfg.Clock.Now()
		if err == nil {
			return now, true
		}
		log.Warn("cannot read the clock", "error", err)
		select {
		case <-ctx.Done():
			return time.Time{}, false
		case <-time.After(time.Second):
		}
	}
}

func (s *Scheduler) fire(ctx context.Context, ps *routing.PingSource, tick time.Time, log *slog.Logger) {
	ev, err := NewEvent(ps, tick)
	if err != nil {
		// Update made this event once already.
		log.Error("cannot make the event of a tick", "tick", tick, "error", err)
		return
	}
	s.fires.Add(1)
	go func() {
		defer s.fires.Done()
		s.cfg.Fire(s.ctx, ps, tick, ev)
	}()
}
