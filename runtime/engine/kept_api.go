package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"golang.org/x/time/rate"

	"github.com/knc-dev/knc/internal/redact"
	"github.com/knc-dev/knc/runtime/cehttp"
	"github.com/knc-dev/knc/runtime/delivery"
	"github.com/knc-dev/knc/runtime/ingress"
	"github.com/knc-dev/knc/runtime/kept"
	"github.com/knc-dev/knc/runtime/pipeline"
	"github.com/knc-dev/knc/runtime/pipeline/metrics"
)

// maxAPIRequestBytes bounds the body of a replay or purge request.
const maxAPIRequestBytes = 1 << 20

// storedLetter is a letter read from its stream, with whether it was
// replayed.
type storedLetter struct {
	namespace string
	seq       uint64
	msg       *nats.Msg
	letter    kept.Letter
	// unreadable is why the message could not be read as a letter; it is
	// then listed as it is, and never replayed.
	unreadable error
}

// keptReadRetry bounds how long a read of the kept letters is made again
// while JetStream's API has no responder: a clustered stream between two
// leaders, as after a server restarted, answers nobody for a moment.
const keptReadRetry = 30 * time.Second

// scan reads every letter of the namespaces f selects, in the order they
// were kept, with their replay marks; withData adds headers and data. A
// read that found no responder is made again, from the start, until
// keptReadRetry has passed or ctx ends.
func (k *keeper) scan(ctx context.Context, f kept.Filter, withData bool) ([]storedLetter, error) {
	deadline := time.Now().Add(keptReadRetry)
	for wait := 50 * time.Millisecond; ; wait = min(2*wait, time.Second) {
		letters, err := k.scanOnce(ctx, f, withData)
		if !errors.Is(err, nats.ErrNoResponders) || time.Now().Add(wait).After(deadline) {
			return letters, err
		}
		select {
		case <-ctx.Done():
			return nil, err
		case <-time.After(wait):
		}
	}
}

func (k *keeper) scanOnce(ctx context.Context, f kept.Filter, withData bool) ([]storedLetter, error) {
	nss, err := k.namespaces(ctx)
	if err != nil {
		return nil, err
	}
	slices.Sort(nss)
	var out []storedLetter
	for _, ns := range nss {
		if f.Namespace != "" && ns != f.Namespace {
			continue
		}
		letters, err := k.scanNamespace(ctx, ns, withData)
		if err != nil {
			return nil, err
		}
		for _, l := range letters {
			if f.Match(l.letter) {
				out = append(out, l)
			}
		}
	}
	return out, nil
}

func (k *keeper) scanNamespace(ctx context.Context, ns string, withData bool) ([]storedLetter, error) {
	stream := kept.StreamName(ns)
	s, err := k.js.Stream(ctx, stream)
	if err != nil {
		return nil, fmt.Errorf("reading the kept letters of %s: %w", ns, err)
	}
	info, err := s.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("reading the kept letters of %s: %w", ns, err)
	}
	if info.State.Msgs == 0 {
		return nil, nil
	}
	last := info.State.LastSeq
	cons, err := s.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{})
	if err != nil {
		return nil, fmt.Errorf("reading the kept letters of %s: %w", ns, err)
	}
	var letters []storedLetter
	replayed := map[uint64]time.Time{}
	// Each fetch asks for no more than what is left, so that it returns
	// as soon as it has it rather than waiting for more.
	for remaining := info.State.Msgs; remaining > 0; {
		batch, err := cons.Fetch(int(min(remaining, 256)), jetstream.FetchMaxWait(5*time.Second))
		if err != nil {
			return nil, fmt.Errorf("reading the kept letters of %s: %w", ns, err)
		}
		n := 0
		for m := range batch.Messages() {
			n++
			meta, err := m.Metadata()
			if err != nil {
				return nil, err
			}
			seq := meta.Sequence.Stream
			remaining = meta.NumPending
			if seq >= last {
				remaining = 0
			}
			if of, ok := kept.ReplayedSeq(m.Subject()); ok {
				replayed[of] = meta.Timestamp
				continue
			}
			raw := &nats.Msg{Subject: m.Subject(), Header: m.Headers(), Data: m.Data()}
			l, err := kept.Read(ns, seq, raw, withData)
			if err != nil {
				// Not a letter this runtime can read; shown as it is.
				l = kept.Letter{ID: kept.ID(ns, seq), Namespace: ns, Reason: raw.Header.Get(kept.HeaderReason), Error: err.Error()}
			}
			letters = append(letters, storedLetter{namespace: ns, seq: seq, msg: raw, letter: l, unreadable: err})
		}
		if err := batch.Error(); err != nil && !errors.Is(err, nats.ErrTimeout) && !errors.Is(err, context.DeadlineExceeded) {
			return nil, fmt.Errorf("reading the kept letters of %s: %w", ns, err)
		}
		if n == 0 {
			// Removed meanwhile (evicted, expired, purged).
			break
		}
	}
	for i := range letters {
		if t, ok := replayed[letters[i].seq]; ok {
			letters[i].letter.ReplayedAt = t.UTC()
		}
	}
	return letters, nil
}

// replay sends the letters of req again.
func (e *Engine) replayLetters(ctx context.Context, req kept.ReplayRequest) (kept.ReplayResult, error) {
	k := e.keeper
	res := kept.ReplayResult{DryRun: req.DryRun, Replayed: []string{}}
	letters, err := k.scan(ctx, req.Filter, false)
	if err != nil {
		return res, err
	}
	limit := rate.NewLimiter(rate.Inf, 1)
	if req.PerSecond > 0 {
		limit = rate.NewLimiter(rate.Limit(req.PerSecond), 1)
	}
	for _, l := range letters {
		skip := func(why string) { res.Skipped = append(res.Skipped, kept.Skipped{ID: l.letter.ID, Why: why}) }
		if !l.letter.ReplayedAt.IsZero() && !req.Force {
			skip("replayed before, at " + l.letter.ReplayedAt.Format(time.RFC3339) + "; --force replays it again")
			continue
		}
		if l.unreadable != nil {
			skip("the letter cannot be read: " + l.unreadable.Error())
			continue
		}
		if req.DryRun {
			res.Replayed = append(res.Replayed, l.letter.ID)
			continue
		}
		if err := limit.Wait(ctx); err != nil {
			return res, err
		}
		var why string
		if req.To != "" {
			why, err = e.replayTo(ctx, l, req)
		} else {
			why, err = e.replayToTarget(ctx, l, req)
		}
		if err != nil {
			return res, fmt.Errorf("replaying %s: %w", l.letter.ID, err)
		}
		if why != "" {
			skip(why)
			continue
		}
		// Marked only once the delivery is stored: a crash in between
		// replays it again, a duplicate, never a loss.
		mark := &nats.Msg{Subject: kept.ReplayedSubject(l.namespace, l.seq), Data: []byte(time.Now().UTC().Format(time.RFC3339Nano))}
		if err := k.pub.PublishAll(ctx, []*nats.Msg{mark}, []string{"replayed:" + l.letter.ID + ":" + strconv.FormatInt(time.Now().UnixNano(), 10)}, nil); err != nil {
			return res, fmt.Errorf("marking %s replayed: %w", l.letter.ID, err)
		}
		res.Replayed = append(res.Replayed, l.letter.ID)
	}
	return res, nil
}

// replayEvent is the letter's event as it is sent again: the letter's
// headers but its own removed.
func replayEvent(l storedLetter, req kept.ReplayRequest, ttl int32) (*nats.Msg, error) {
	h := nats.Header{}
	for name, v := range l.msg.Header {
		if strings.HasPrefix(name, kept.HeaderPrefix) || strings.HasPrefix(name, "Nats-") {
			continue
		}
		h[name] = v
	}
	m := &nats.Msg{Header: h, Data: l.msg.Data}
	if req.ResetTTL {
		ev, err := cehttp.FromNATS(&nats.Msg{Subject: l.msg.Subject, Header: h, Data: l.msg.Data})
		if err != nil {
			return nil, err
		}
		ev.SetExtension(ingress.ExtensionTTL, ttl)
		fresh := cehttp.ToNATS(ev, "")
		for name, v := range h {
			if !strings.HasPrefix(name, "ce-") && name != "content-type" && name != "knc-ce-types" && name != "knc-ce-database64" {
				fresh.Header[name] = v
			}
		}
		m = fresh
	}
	m.Header[kept.HeaderReplayOf] = []string{l.letter.ID}
	return m, nil
}

// replayToTarget stores the letter as a new delivery to its Trigger or
// Subscription, which the dispatch stage attempts with its delivery
// options; why says why it was not, when it was not.
func (e *Engine) replayToTarget(ctx context.Context, l storedLetter, req kept.ReplayRequest) (why string, err error) {
	p := e.currentPlan()
	src := p.Source(l.msg.Header.Get(kept.HeaderSourceID))
	if src == nil {
		return fmt.Sprintf("%s %s is not served any more; --to URL sends it elsewhere", l.letter.SourceKind, l.letter.Source), nil
	}
	if l.letter.Reason == kept.ReasonTTL {
		return e.replayReply(ctx, l, req, src)
	}
	t := src.Target(l.msg.Header.Get(kept.HeaderTargetToken))
	if t == nil {
		return fmt.Sprintf("%s %s is not served any more; --to URL sends it elsewhere", l.letter.TargetKind, l.letter.Target), nil
	}
	m, err := replayEvent(l, req, e.opts.DefaultTTL)
	if err != nil {
		return "the letter's event cannot be read: " + err.Error(), nil
	}
	m.Subject = src.Names().Subject(pipeline.StageSend, t.Token())
	// The same ID for the replays of one letter within the duplicate
	// window: a replay retried after a lost answer stores it once.
	id := "replay:" + l.letter.ID
	if !l.letter.ReplayedAt.IsZero() {
		id += ":" + strconv.FormatInt(l.letter.ReplayedAt.UnixNano(), 10)
	}
	fresh := []bool{false}
	if err := e.acks.PublishAll(ctx, []*nats.Msg{m}, []string{id}, fresh); err != nil {
		return "", err
	}
	if fresh[0] {
		t.CountReplayed()
	}
	return "", nil
}

// replayReply stores a reply kept because its TTL was exhausted in its
// Broker, as its Trigger would have, to be routed to every Trigger: only
// with a fresh TTL, which a reply loop would exhaust again otherwise.
func (e *Engine) replayReply(ctx context.Context, l storedLetter, req kept.ReplayRequest, src *pipeline.Source) (why string, err error) {
	if !req.ResetTTL {
		return "a reply whose TTL was exhausted, which usually means a reply loop; --reset-ttl stores it in its Broker with a fresh TTL", nil
	}
	m, err := replayEvent(l, req, e.opts.DefaultTTL)
	if err != nil {
		return "the letter's event cannot be read: " + err.Error(), nil
	}
	m.Subject = src.Names().In
	id := "replay:" + l.letter.ID
	if !l.letter.ReplayedAt.IsZero() {
		id += ":" + strconv.FormatInt(l.letter.ReplayedAt.UnixNano(), 10)
	}
	fresh := []bool{false}
	if err := e.acks.PublishAll(ctx, []*nats.Msg{m}, []string{id}, fresh); err != nil {
		return "", err
	}
	if fresh[0] {
		if t := src.Target(l.msg.Header.Get(kept.HeaderTargetToken)); t != nil {
			t.CountReplayedIntoSource()
		}
	}
	return "", nil
}

// replayTo sends the letter's event once to req.To.
func (e *Engine) replayTo(ctx context.Context, l storedLetter, req kept.ReplayRequest) (why string, err error) {
	m, err := replayEvent(l, req, e.opts.DefaultTTL)
	if err != nil {
		return "the letter's event cannot be read: " + err.Error(), nil
	}
	m.Subject = l.msg.Subject
	ev, err := cehttp.FromNATS(m)
	if err != nil {
		return "the letter's event cannot be read: " + err.Error(), nil
	}
	header := http.Header{}
	if v := m.Header.Get(cehttp.NATSPassThrough); v != "" {
		header = cehttp.DecodeHeader(v)
	}
	r := delivery.NewSender().Send(ctx, ev, req.To, delivery.Options{Format: "binary", Timeout: e.opts.AttemptTimeout, Header: header})
	if !r.Success {
		msg := fmt.Sprintf("%s did not accept it: status %d", redact.URI(req.To), r.StatusCode)
		if r.Err != nil {
			msg += ": " + redact.Text(r.Err.Error())
		}
		return msg, nil
	}
	return "", nil
}

// purgeLetters deletes the letters of req.
func (e *Engine) purgeLetters(ctx context.Context, req kept.PurgeRequest) (kept.PurgeResult, error) {
	k := e.keeper
	res := kept.PurgeResult{DryRun: req.DryRun, Purged: []string{}}
	letters, err := k.scan(ctx, req.Filter, false)
	if err != nil {
		return res, err
	}
	for _, l := range letters {
		if !req.DryRun {
			s, err := k.js.Stream(ctx, kept.StreamName(l.namespace))
			if err != nil {
				return res, err
			}
			if err := k.remove(ctx, s, l.seq, func(t *metrics.Target) { t.Purged.Inc() }); err != nil {
				return res, err
			}
		}
		res.Purged = append(res.Purged, l.letter.ID)
	}
	return res, nil
}

// keptHandler serves the kept-letter API (package runtime/kept) on the
// admin listener. It never logs an event's data.
func (e *Engine) keptHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if e.keeper == nil || !e.ready.Load() {
			w.Header().Set("Retry-After", "1")
			http.Error(w, "the runtime is starting", http.StatusServiceUnavailable)
			return
		}
		ctx := r.Context()
		switch {
		case r.URL.Path == kept.PathLetters && r.Method == http.MethodGet:
			f, err := kept.FilterOf(r.URL.Query())
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			letters, err := e.keeper.scan(ctx, f, false)
			if err != nil {
				apiError(w, err)
				return
			}
			res := kept.ListResult{Letters: make([]kept.Letter, 0, len(letters))}
			for _, l := range letters {
				res.Letters = append(res.Letters, l.letter)
			}
			writeJSON(w, res)
		case strings.HasPrefix(r.URL.Path, kept.PathLetters+"/") && r.Method == http.MethodGet:
			id := strings.TrimPrefix(r.URL.Path, kept.PathLetters+"/")
			ns, _, err := kept.ParseID(id)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			letters, err := e.keeper.scan(ctx, kept.Filter{Namespace: ns, IDs: []string{id}}, true)
			if err != nil {
				apiError(w, err)
				return
			}
			if len(letters) == 0 {
				http.Error(w, "no kept letter "+id+": knc dlq list shows those kept", http.StatusNotFound)
				return
			}
			writeJSON(w, letters[0].letter)
		case r.URL.Path == kept.PathReplay && r.Method == http.MethodPost:
			var req kept.ReplayRequest
			if !readJSON(w, r, &req) {
				return
			}
			res, err := e.replayLetters(ctx, req)
			if err != nil {
				apiError(w, err)
				return
			}
			writeJSON(w, res)
		case r.URL.Path == kept.PathPurge && r.Method == http.MethodPost:
			var req kept.PurgeRequest
			if !readJSON(w, r, &req) {
				return
			}
			res, err := e.purgeLetters(ctx, req)
			if err != nil {
				apiError(w, err)
				return
			}
			writeJSON(w, res)
		default:
			http.Error(w, "not found: the kept-letter API serves GET "+kept.PathLetters+", GET "+kept.PathLetters+"/ID, POST "+kept.PathReplay+" and POST "+kept.PathPurge, http.StatusNotFound)
		}
	})
}

func readJSON(w http.ResponseWriter, r *http.Request, v any) bool {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxAPIRequestBytes))
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func apiError(w http.ResponseWriter, err error) {
	http.Error(w, err.Error(), http.StatusServiceUnavailable)
}
