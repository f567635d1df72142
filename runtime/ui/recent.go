package ui

import (
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
)

// MaxRecentEvents bounds how many events per route Recent keeps.
const MaxRecentEvents = 1000

// maxValueBytes bounds each attribute value kept, and maxAttributes the
// attributes kept of an event: an extension may be large.
const (
	maxValueBytes = 256
	maxAttributes = 32
)

// RecentEvent is an event a route matched: its context attributes and
// extensions, never its data.
type RecentEvent struct {
	// Time is when the runtime routed it.
	Time       time.Time         `json:"time"`
	Attributes map[string]string `json:"attributes"`
}

// Recent keeps the last events each Trigger or Subscription matched, in a
// ring of fixed size per route. A nil *Recent keeps nothing.
type Recent struct {
	size int
	mu   sync.Mutex
	// rings are by route ID (Trigger/NAMESPACE/NAME).
	rings map[string]*ring
}

type ring struct {
	events []RecentEvent
	next   int // where the next event goes once events is full
}

// NewRecent returns a Recent that keeps size events per route, at most
// MaxRecentEvents; nil when size is 0 or less.
func NewRecent(size int) *Recent {
	if size <= 0 {
		return nil
	}
	return &Recent{size: min(size, MaxRecentEvents), rings: map[string]*ring{}}
}

// Size is how many events per route are kept, 0 for a nil Recent.
func (r *Recent) Size() int {
	if r == nil {
		return 0
	}
	return r.size
}

// Matched keeps the attributes of ev, which the Trigger or Subscription of
// kind ("Trigger" or "Subscription"), namespace and name matched. It keeps
// no reference to ev.
func (r *Recent) Matched(kind, namespace, name string, ev *event.Event) {
	if r == nil {
		return
	}
	re := RecentEvent{Attributes: attributes(ev)}
	id := nodeID(kind, namespace, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	// Read under the lock, so that the ring's order is the times' order.
	re.Time = time.Now().UTC()
	rg := r.rings[id]
	if rg == nil {
		rg = &ring{events: make([]RecentEvent, 0, r.size)}
		r.rings[id] = rg
	}
	if len(rg.events) < r.size {
		rg.events = append(rg.events, re)
		return
	}
	rg.events[rg.next] = re
	rg.next = (rg.next + 1) % r.size
}

// Events returns the events kept for the route id, newest first.
func (r *Recent) Events(id string) []RecentEvent {
	out := []RecentEvent{}
	if r == nil {
		return out
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	rg := r.rings[id]
	if rg == nil {
		return out
	}
	// Oldest first: from next to the end, then from the start to next.
	out = append(out, rg.events[rg.next:]...)
	out = append(out, rg.events[:rg.next]...)
	slices.Reverse(out)
	return out
}

// Forget drops the events of every route but those of keep, for a table
// that no longer has them.
func (r *Recent) Forget(keep func(id string) bool) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	maps.DeleteFunc(r.rings, func(id string, _ *ring) bool { return !keep(id) })
}

func attributes(ev *event.Event) map[string]string {
	a := make(map[string]string, 8)
	put := func(k, v string) {
		if v != "" && len(a) < maxAttributes {
			if len(v) > maxValueBytes {
				v = v[:maxValueBytes] + "…"
			}
			a[k] = v
		}
	}
	put("specversion", ev.SpecVersion())
	put("id", ev.ID())
	put("source", ev.Source())
	put("type", ev.Type())
	put("subject", ev.Subject())
	put("datacontenttype", ev.DataContentType())
	put("dataschema", ev.DataSchema())
	if t := ev.Time(); !t.IsZero() {
		put("time", t.UTC().Format(time.RFC3339Nano))
	}
	ext := ev.Extensions()
	for _, k := range slices.Sorted(maps.Keys(ext)) {
		s, err := types.Format(ext[k])
		if err == nil {
			put(k, s)
		}
	}
	return a
}
