package stage

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// fetchWait is how long one pull request waits for messages. Pull requests
// are cheap; a shorter wait only costs idle requests.
const fetchWait = 10 * time.Second

// Stage pulls the messages of one consumer and has a pool of workers
// process them, with at most capacity in progress. It pulls exactly as many
// messages as it has free slots, so no message waits in a client buffer
// while its AckWait runs out.
type Stage struct {
	name     string
	consumer jetstream.Consumer
	process  func(context.Context, jetstream.Msg)
	log      *slog.Logger

	slots  chan struct{}
	cancel context.CancelFunc
	done   chan struct{}
	// workers process the pulled messages; start makes them.
	workers *Pool[jetstream.Msg]

	// trim, when set, removes the messages the stage acknowledged; it runs
	// while the stage pulls.
	trim      *trimmer
	trimDone  chan struct{}
	processed atomic.Int64

	// pulls counts the pull requests outstanding; pullDone is signalled
	// when one ends. pauseUntil (Unix nanoseconds) holds back new pulls
	// after one failed.
	pulls      atomic.Int32
	pullDone   chan struct{}
	pauseUntil atomic.Int64

	// pullsMu guards pullsCtx, the parent of every pull request's context;
	// Repull cancels it and makes a new one.
	pullsMu     sync.Mutex
	pullsCtx    context.Context
	cancelPulls context.CancelFunc
	// fetchWait is how long one pull request waits. heartbeat, when set,
	// is how often the server says it still holds the request (one it
	// lost ends after two missed); when 0, nats.go picks it (none for a
	// wait as short as fetchWait). Tests lengthen both.
	fetchWait, heartbeat time.Duration
}

// New returns a stage, not yet started, that hands the messages of
// consumer to process on at most capacity workers.
func New(name string, consumer jetstream.Consumer, capacity int, log *slog.Logger, process func(context.Context, jetstream.Msg)) *Stage {
	s := &Stage{
		name:      name,
		consumer:  consumer,
		process:   process,
		log:       log.With("stage", name),
		slots:     make(chan struct{}, capacity),
		done:      make(chan struct{}),
		pullDone:  make(chan struct{}, 1),
		fetchWait: fetchWait,
	}
	s.pullsCtx, s.cancelPulls = context.WithCancel(context.Background())
	return s
}

// Repull ends the stage's outstanding pull requests and makes new ones.
// A pull request lives in the server that took it: when JetStream is
// restarted (after a full volume), the new one does not know the old
// requests, and a stage whose free slots were all in such requests would
// pull nothing until they expired (fetchWait), however much waits.
func (s *Stage) Repull() {
	s.pullsMu.Lock()
	defer s.pullsMu.Unlock()
	s.cancelPulls()
	s.pullsCtx, s.cancelPulls = context.WithCancel(context.Background())
}

// pullContext returns the context of a new pull request: it ends after
// fetchWait, when ctx ends, or at the next Repull.
func (s *Stage) pullContext(ctx context.Context) (context.Context, context.CancelFunc) {
	s.pullsMu.Lock()
	parent := s.pullsCtx
	s.pullsMu.Unlock()
	fetchCtx, cancel := context.WithTimeout(ctx, s.fetchWait)
	stop := context.AfterFunc(parent, cancel)
	return fetchCtx, func() {
		stop()
		cancel()
	}
}

// Start runs the pull loop until stop. Messages are processed with work,
// which is cancelled only when in-flight work must be abandoned.
func (s *Stage) Start(work context.Context) {
	if s.cancel != nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.workers = NewPool(work, cap(s.slots), func(ctx context.Context, msg jetstream.Msg) {
		s.process(ctx, msg)
		s.processed.Add(1)
		s.release(1)
	})
	go s.loop(ctx)
	if s.trim != nil {
		s.trimDone = make(chan struct{})
		go func() {
			defer close(s.trimDone)
			s.trim.run(ctx, &s.processed)
		}()
	}
}

// loop keeps pull requests outstanding for the stage's free slots. A new
// pull is made without waiting for the previous ones to end, as soon as
// enough slots are free: one pull at a time would leave a stage whose
// workers are busy asking for one message per round trip.
func (s *Stage) loop(ctx context.Context) {
	defer close(s.done)
	var pulls sync.WaitGroup
	defer func() {
		pulls.Wait()
		// No message comes any more: idle workers may end.
		s.workers.Close()
	}()
	minPull := max(1, cap(s.slots)/4)
	for {
		if d := time.Until(time.Unix(0, s.pauseUntil.Load())); d > 0 {
			s.pause(ctx, d)
		}
		n := s.reserve(ctx, minPull)
		if n == 0 {
			return
		}
		fetchCtx, cancelFetch := s.pullContext(ctx)
		opts := []jetstream.FetchOpt{jetstream.FetchContext(fetchCtx)}
		if s.heartbeat > 0 {
			opts = append(opts, jetstream.FetchHeartbeat(s.heartbeat))
		}
		batch, err := s.consumer.Fetch(n, opts...)
		if err != nil {
			cancelFetch()
			s.release(n)
			if ctx.Err() != nil {
				return
			}
			s.log.Warn("pulling messages failed", "error", err)
			s.pause(ctx, time.Second)
			continue
		}
		s.pulls.Add(1)
		pulls.Go(func() {
			defer func() {
				s.pulls.Add(-1)
				select {
				case s.pullDone <- struct{}{}:
				default:
				}
			}()
			defer cancelFetch()
			s.drain(ctx, batch, n)
		})
	}
}

// reserve takes free slots for a pull and returns how many: at least one,
// and while another pull is outstanding at least minPull, so that a busy
// stage pulls in batches rather than a message at a time. It returns 0
// once ctx ends.
func (s *Stage) reserve(ctx context.Context, minPull int) int {
	n := 0
	for {
	take:
		for n < cap(s.slots) {
			select {
			case s.slots <- struct{}{}:
				n++
			default:
				break take
			}
		}
		if n >= minPull || (n > 0 && s.pulls.Load() == 0) {
			return n
		}
		select {
		case s.slots <- struct{}{}:
			n++
		case <-s.pullDone:
		case <-ctx.Done():
			s.release(n)
			return 0
		}
	}
}

// drain hands each message of a pull of n to the workers, then frees the
// slots of the messages that did not come.
func (s *Stage) drain(ctx context.Context, batch jetstream.MessageBatch, n int) {
	received := 0
	for msg := range batch.Messages() {
		received++
		if ctx.Err() != nil {
			// Stopping: hand the message back at once rather than
			// after AckWait.
			_ = msg.Nak()
			s.release(1)
			continue
		}
		s.workers.Submit(msg)
	}
	s.release(n - received)
	if err := batch.Error(); err != nil && ctx.Err() == nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("pulling messages failed", "error", err)
		s.pauseUntil.Store(time.Now().Add(time.Second).UnixNano())
	}
}

func (s *Stage) release(n int) {
	for range n {
		<-s.slots
	}
}

func (s *Stage) pause(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// Stop ends the pull loop; messages in progress go on.
func (s *Stage) Stop() {
	if s.cancel != nil {
		s.cancel()
		<-s.done
		if s.trimDone != nil {
			<-s.trimDone
		}
	}
}

// Wait waits for the messages in progress, or for ctx to end.
func (s *Stage) Wait(ctx context.Context) error {
	if s.workers == nil {
		return nil // never started
	}
	return s.workers.Wait(ctx)
}

// Trimming makes s, a route stage, purge from stream in bulk what its
// consumer acknowledged.
func (s *Stage) Trimming(stream string, consumer jetstream.Consumer, js jetstream.JetStream, log *slog.Logger) *Stage {
	s.trim = &trimmer{stream: stream, consumer: consumer, js: js, log: log}
	return s
}
