package kept

import (
	"fmt"
	"net/url"
	"time"
)

// Paths of the kept-letter API on the runtime's admin listener.
const (
	// PathLetters lists letters (GET, Filter as query); PathLetters/ID
	// shows one, with its headers and data.
	PathLetters = "/dlq/letters"
	// PathReplay replays letters (POST, a ReplayRequest).
	PathReplay = "/dlq/replay"
	// PathPurge deletes letters (POST, a PurgeRequest).
	PathPurge = "/dlq/purge"
	// TokenName is the file of the --bearer-tokens directory that holds
	// the tokens of the API.
	TokenName = "admin"
)

// Filter selects letters; the zero Filter selects all.
type Filter struct {
	Namespace string `json:"namespace,omitempty"`
	// TargetKind (Trigger or Subscription) and Target name one
	// destination; either may be empty.
	TargetKind string `json:"targetKind,omitempty"`
	Target     string `json:"target,omitempty"`
	Type       string `json:"type,omitempty"`
	Source     string `json:"source,omitempty"`
	Reason     string `json:"reason,omitempty"`
	// Since and Until bound when the letter was kept.
	Since time.Time `json:"since,omitzero"`
	Until time.Time `json:"until,omitzero"`
	// IDs, when set, select these letters only.
	IDs []string `json:"ids,omitempty"`
}

// Match reports whether f selects l.
func (f Filter) Match(l Letter) bool {
	switch {
	case f.Namespace != "" && l.Namespace != f.Namespace,
		f.TargetKind != "" && l.TargetKind != f.TargetKind,
		f.Target != "" && l.Target != f.Target,
		f.Type != "" && l.Event.Type != f.Type,
		f.Source != "" && l.Event.Source != f.Source,
		f.Reason != "" && l.Reason != f.Reason,
		!f.Since.IsZero() && l.KeptAt.Before(f.Since),
		!f.Until.IsZero() && l.KeptAt.After(f.Until):
		return false
	}
	if len(f.IDs) > 0 {
		for _, id := range f.IDs {
			if id == l.ID {
				return true
			}
		}
		return false
	}
	return true
}

// Query encodes f for PathLetters.
func (f Filter) Query() url.Values {
	q := url.Values{}
	set := func(k, v string) {
		if v != "" {
			q.Set(k, v)
		}
	}
	set("namespace", f.Namespace)
	set("targetKind", f.TargetKind)
	set("target", f.Target)
	set("type", f.Type)
	set("source", f.Source)
	set("reason", f.Reason)
	if !f.Since.IsZero() {
		q.Set("since", f.Since.Format(time.RFC3339Nano))
	}
	if !f.Until.IsZero() {
		q.Set("until", f.Until.Format(time.RFC3339Nano))
	}
	for _, id := range f.IDs {
		q.Add("id", id)
	}
	return q
}

// FilterOf decodes a Filter encoded by Query.
func FilterOf(q url.Values) (Filter, error) {
	f := Filter{
		Namespace: q.Get("namespace"), TargetKind: q.Get("targetKind"), Target: q.Get("target"),
		Type: q.Get("type"), Source: q.Get("source"), Reason: q.Get("reason"), IDs: q["id"],
	}
	for k, t := range map[string]*time.Time{"since": &f.Since, "until": &f.Until} {
		if v := q.Get(k); v != "" {
			var err error
			if *t, err = time.Parse(time.RFC3339Nano, v); err != nil {
				return Filter{}, fmt.Errorf("query parameter %s: %w", k, err)
			}
		}
	}
	return f, nil
}

// ListResult answers PathLetters.
type ListResult struct {
	Letters []Letter `json:"letters"`
}

// ReplayRequest asks for the letters of Filter to be sent again: to the
// Trigger or Subscription each was for, through its delivery options, or
// once to To.
type ReplayRequest struct {
	Filter Filter `json:"filter"`
	// To, when set, is the URL each event is sent to instead, once.
	To string `json:"to,omitempty"`
	// PerSecond bounds how many letters are replayed each second; 0 is
	// no bound.
	PerSecond float64 `json:"perSecond,omitempty"`
	// DryRun says what would be replayed and replays nothing.
	DryRun bool `json:"dryRun,omitempty"`
	// Force replays letters already replayed.
	Force bool `json:"force,omitempty"`
	// ResetTTL gives the events a fresh knativebrokerttl.
	ResetTTL bool `json:"resetTTL,omitempty"`
}

// ReplayResult answers PathReplay.
type ReplayResult struct {
	DryRun   bool      `json:"dryRun,omitempty"`
	Replayed []string  `json:"replayed"`
	Skipped  []Skipped `json:"skipped,omitempty"`
}

// Skipped is a letter a replay left alone, and why.
type Skipped struct {
	ID  string `json:"id"`
	Why string `json:"why"`
}

// PurgeRequest asks for the letters of Filter to be deleted.
type PurgeRequest struct {
	Filter Filter `json:"filter"`
	DryRun bool   `json:"dryRun,omitempty"`
}

// PurgeResult answers PathPurge.
type PurgeResult struct {
	DryRun bool     `json:"dryRun,omitempty"`
	Purged []string `json:"purged"`
}
