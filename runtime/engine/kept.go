package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// Defaults of the kept-letter store.
const (
	DefaultKeptMaxBytes = 1 << 30
	DefaultKeptMaxAge   = 7 * 24 * time.Hour
	// keptSweepInterval is how often letters older than the age limit
	// are removed and counted.
	keptSweepInterval = time.Minute
	// keptAgeBackstop is how much longer than the age limit JetStream
	// keeps a letter by itself, should the runtime not run to sweep it.
	keptAgeBackstop = 24 * time.Hour
)

// keeper stores kept letters (package runtime/kept), one stream per
// namespace, made when its first letter comes. A stream refuses a letter
// when it is full (DiscardNew); the keeper then evicts the oldest letters
// and counts each, so that the store can never grow past its bound nor
// lose a letter without counting it. The streams are not the ingress's:
// a full store of letters never turns an ingress to 503.
type keeper struct {
	js       jetstream.JetStream
	pub      *ackPublisher
	metrics  *metrics.Set
	maxBytes int64
	maxAge   time.Duration
	replicas int

	mu sync.Mutex
	// ready holds the namespaces whose stream is set up; evicting
	// serialises the evictions of each namespace.
	ready    map[string]bool
	evicting map[string]*sync.Mutex
}

func newKeeper(js jetstream.JetStream, pub *ackPublisher, m *metrics.Set, o *Options) *keeper {
	maxBytes := o.KeptMaxBytes
	if o.MaxStoreBytes > 0 {
		// A stream's bound is reserved from the store: letters take at
		// most a quarter of it, the ingresses half.
		maxBytes = min(maxBytes, max(o.MaxStoreBytes/4, 1))
	}
	return &keeper{
		js: js, pub: pub, metrics: m,
		maxBytes: maxBytes, maxAge: o.KeptMaxAge, replicas: o.StreamReplicas,
		ready: map[string]bool{}, evicting: map[string]*sync.Mutex{},
	}
}

// ensure sets up the stream of namespace.
func (k *keeper) ensure(ctx context.Context, namespace string) error {
	k.mu.Lock()
	ok := k.ready[namespace]
	k.mu.Unlock()
	if ok {
		return nil
	}
	err := ensureStream(ctx, k.js, jetstream.StreamConfig{
		Name:        kept.StreamName(namespace),
		Description: "kept letters of namespace " + namespace + ": deliveries that ended without success (knc dlq)",
		Subjects:    kept.StreamSubjects(namespace),
		Retention:   jetstream.LimitsPolicy,
		Storage:     jetstream.FileStorage,
		Discard:     jetstream.DiscardNew,
		Duplicates:  duplicateWindow,
		Replicas:    k.replicas,
		MaxMsgs:     -1,
		MaxBytes:    k.maxBytes,
		MaxAge:      k.maxAge + keptAgeBackstop,
	})
	if err != nil {
		return fmt.Errorf("setting up the stream of kept letters of namespace %s: %w", namespace, err)
	}
	k.mu.Lock()
	k.ready[namespace] = true
	k.mu.Unlock()
	return nil
}

func (k *keeper) evictLock(namespace string) *sync.Mutex {
	k.mu.Lock()
	defer k.mu.Unlock()
	m := k.evicting[namespace]
	if m == nil {
		m = &sync.Mutex{}
		k.evicting[namespace] = m
	}
	return m
}

// Keep stores a letter; see pipeline.Keeper. A full stream has its
// oldest letters evicted, and counted, until the letter fits.
func (k *keeper) Keep(ctx context.Context, namespace string, m *nats.Msg, id string) (bool, error) {
	if err := k.ensure(ctx, namespace); err != nil {
		return false, err
	}
	if size := letterSize(m); size > k.maxBytes {
		// It would never fit: kept and evicted at once.
		k.forLetter(m.Header).Drop(metrics.DropKeptLettersFull)
		return true, nil
	}
	for tries := 0; ; tries++ {
		fresh := []bool{false}
		err := k.pub.PublishAll(ctx, []*nats.Msg{m}, []string{id}, fresh)
		if err == nil {
			return fresh[0], nil
		}
		if !errors.Is(err, errStreamFull) || tries >= 1000 {
			return false, err
		}
		if err := k.evictOldest(ctx, namespace); err != nil {
			return false, err
		}
	}
}

// letterSize is about what the stream counts of m.
func letterSize(m *nats.Msg) int64 {
	n := len(m.Subject) + len(m.Data) + 64
	for k, vs := range m.Header {
		for _, v := range vs {
			n += len(k) + len(v) + 4
		}
	}
	return int64(n)
}

// evictOldest removes the first message of the namespace's stream and
// counts it when it is a letter.
func (k *keeper) evictOldest(ctx context.Context, namespace string) error {
	lock := k.evictLock(namespace)
	lock.Lock()
	defer lock.Unlock()
	s, err := k.js.Stream(ctx, kept.StreamName(namespace))
	if err != nil {
		return fmt.Errorf("evicting a kept letter: %w", err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return fmt.Errorf("evicting a kept letter: %w", err)
	}
	if info.State.Msgs == 0 {
		return errors.New("evicting a kept letter: the store is empty and still full")
	}
	return k.remove(ctx, s, info.State.FirstSeq, func(t *metrics.Target) { t.Drop(metrics.DropKeptLettersFull) })
}

// remove deletes message seq of s and, when it is a letter, counts it
// with count. A message already gone is not an error.
func (k *keeper) remove(ctx context.Context, s jetstream.Stream, seq uint64, count func(*metrics.Target)) error {
	raw, err := s.GetMsg(ctx, seq)
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading kept letter %d: %w", seq, err)
	}
	if deleted, err := deleteMsg(ctx, s, seq); err != nil || !deleted {
		return err
	}
	if _, isMark := kept.ReplayedSeq(raw.Subject); !isMark && count != nil {
		count(k.forLetter(raw.Header))
	}
	return nil
}

// deleteMsg deletes message seq of s. A message removed meanwhile, by
// another eviction, sweep or purge that counted it, is not deleted here,
// and is not an error: the API's answer to deleting it does not carry the
// typed not-found error, so it is asked for again.
func deleteMsg(ctx context.Context, s jetstream.Stream, seq uint64) (deleted bool, err error) {
	err = s.DeleteMsg(ctx, seq)
	if err == nil {
		return true, nil
	}
	if _, gone := s.GetMsg(ctx, seq); errors.Is(gone, jetstream.ErrMsgNotFound) {
		return false, nil
	}
	return false, fmt.Errorf("removing message %d of %s: %w", seq, s.CachedInfo().Config.Name, err)
}

// forLetter accounts for the target a letter names.
func (k *keeper) forLetter(h nats.Header) *metrics.Target {
	ns, name, _ := strings.Cut(h.Get(kept.HeaderSource), "/")
	return k.metrics.ForLetter(h.Get(kept.HeaderSourceKind), ns, name, h.Get(kept.HeaderTarget))
}

// namespaces lists the namespaces that have a stream of letters.
func (k *keeper) namespaces(ctx context.Context) ([]string, error) {
	var out []string
	names := k.js.StreamNames(ctx, jetstream.WithStreamListSubject(kept.AllSubjects))
	for name := range names.Name() {
		if ns, ok := kept.NamespaceOf(name); ok {
			out = append(out, ns)
		}
	}
	if err := names.Err(); err != nil && !errors.Is(err, jetstream.ErrEndOfData) {
		return nil, fmt.Errorf("listing the streams of kept letters: %w", err)
	}
	return out, nil
}

// sweep removes, and counts as expired, the letters older than the age
// limit.
func (k *keeper) sweep(ctx context.Context) error {
	nss, err := k.namespaces(ctx)
	if err != nil {
		return err
	}
	cutoff := time.Now().Add(-k.maxAge)
	for _, ns := range nss {
		s, err := k.js.Stream(ctx, kept.StreamName(ns))
		if err != nil {
			return err
		}
		for {
			info, err := s.Info(ctx)
			if err != nil {
				return err
			}
			if info.State.Msgs == 0 {
				break
			}
			raw, err := s.GetMsg(ctx, info.State.FirstSeq)
			if err != nil {
				return err
			}
			if raw.Time.After(cutoff) {
				break
			}
			if err := k.remove(ctx, s, raw.Sequence, func(t *metrics.Target) { t.Expired.Inc() }); err != nil {
				return err
			}
		}
	}
	return nil
}

// runSweeper sweeps every keptSweepInterval until ctx ends.
func (k *keeper) runSweeper(ctx context.Context, log interface{ Warn(string, ...any) }) {
	t := time.NewTicker(keptSweepInterval)
	defer t.Stop()
	for {
		if err := k.sweep(ctx); err != nil && ctx.Err() == nil {
			log.Warn("could not remove expired kept letters; trying again later", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
