package routing

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Shard says which part of a table split across several files a table is.
// A large table does not fit in one ConfigMap (1 MiB), so knc build splits
// it; the runtime reads every part and merges them (see Merge).
type Shard struct {
	// Index is this part's number, from 0 to Count-1.
	Index int `json:"index"`
	Count int `json:"count"`
	// Table identifies the whole table: every part of one table carries
	// the same value, so that parts of different builds are never merged.
	Table string `json:"table"`
}

// ShardFile is the name of part i of a split table in a directory.
func ShardFile(i int) string { return "routing-table-" + strconv.Itoa(i) + ".json" }

// Split splits t into tables whose encodings (Encode) take at most
// maxBytes each, in the order of t. A Broker whose Triggers do not fit in
// one part (a Channel whose Subscriptions do not) appears in several, each
// with some of them and the same other fields; Merge puts them back
// together. A table that fits is returned alone, without Shard.
func Split(t *Table, maxBytes int) ([]*Table, error) {
	whole, err := Encode(t)
	if err != nil {
		return nil, err
	}
	if len(whole) <= maxBytes {
		c := *t
		c.Shard = nil
		return []*Table{&c}, nil
	}
	sum := sha256.Sum256(whole)
	id := hex.EncodeToString(sum[:])[:16]
	// Pack by compact size, which Encode's indentation inflates by a
	// bounded factor; pack tighter until every part fits.
	for budget := maxBytes / 2; budget >= 1024; budget = budget * 3 / 4 {
		parts, err := pack(t, budget)
		if err != nil {
			return nil, err
		}
		fits := true
		for i, p := range parts {
			p.Shard = &Shard{Index: i, Count: len(parts), Table: id}
			b, err := Encode(p)
			if err != nil {
				return nil, err
			}
			if len(b) > maxBytes {
				fits = false
				break
			}
		}
		if fits {
			return parts, nil
		}
	}
	return nil, fmt.Errorf("splitting the routing table: an entry does not fit in %d bytes", maxBytes)
}

// pack fills parts of about budget bytes (compact JSON) with the Brokers and
// Channels of t, in order, splitting their Triggers and Subscriptions where
// needed.
func pack(t *Table, budget int) ([]*Table, error) {
	p := packer{budget: budget, cur: &Table{APIVersion: APIVersion, Kind: Kind}}
	for i := range t.Brokers {
		head := t.Brokers[i]
		head.Triggers = nil
		err := packEntry(&p, head, t.Brokers[i].Triggers,
			func(b *Broker, tr Trigger) { b.Triggers = append(b.Triggers, tr) },
			func(b Broker) { p.cur.Brokers = append(p.cur.Brokers, b) })
		if err != nil {
			return nil, err
		}
	}
	for i := range t.Channels {
		head := t.Channels[i]
		head.Subscriptions = nil
		err := packEntry(&p, head, t.Channels[i].Subscriptions,
			func(c *Channel, s Subscription) { c.Subscriptions = append(c.Subscriptions, s) },
			func(c Channel) { p.cur.Channels = append(p.cur.Channels, c) })
		if err != nil {
			return nil, err
		}
	}
	for i := range t.PingSources {
		err := packEntry(&p, t.PingSources[i], nil,
			func(*PingSource, struct{}) {},
			func(s PingSource) { p.cur.PingSources = append(p.cur.PingSources, s) })
		if err != nil {
			return nil, err
		}
	}
	for i := range t.Sources {
		err := packEntry(&p, t.Sources[i], []struct{}(nil), func(*EventSource, struct{}) {},
			func(s EventSource) { p.cur.Sources = append(p.cur.Sources, s) })
		if err != nil {
			return nil, err
		}
	}
	for i := range t.Sequences {
		err := packEntry(&p, t.Sequences[i], []struct{}(nil), func(*Sequence, struct{}) {},
			func(s Sequence) { p.cur.Sequences = append(p.cur.Sequences, s) })
		if err != nil {
			return nil, err
		}
	}
	for i := range t.Parallels {
		err := packEntry(&p, t.Parallels[i], []struct{}(nil), func(*Parallel, struct{}) {},
			func(x Parallel) { p.cur.Parallels = append(p.cur.Parallels, x) })
		if err != nil {
			return nil, err
		}
	}
	if p.cur.entries() > 0 || len(p.parts) == 0 {
		p.parts = append(p.parts, p.cur)
	}
	return p.parts, nil
}

type packer struct {
	parts  []*Table
	cur    *Table
	size   int
	budget int
}

// entries counts the top-level entries of t.
func (t *Table) entries() int {
	return len(t.Brokers) + len(t.Channels) + len(t.PingSources) + len(t.Sources) + len(t.Sequences) + len(t.Parallels)
}

func (p *packer) flush() {
	p.parts = append(p.parts, p.cur)
	p.cur = &Table{APIVersion: APIVersion, Kind: Kind}
	p.size = 0
}

// packEntry adds a Broker or Channel (head, without its items) and its
// items, starting a new part whenever the next item does not fit; the entry
// is repeated, with the items that follow, in the new part.
func packEntry[E, I any](p *packer, head E, items []I, add func(*E, I), put func(E)) error {
	hs, err := jsonSize(&head)
	if err != nil {
		return err
	}
	if p.size > 0 && p.size+hs > p.budget {
		p.flush()
	}
	entry, n := head, 0
	p.size += hs
	for _, it := range items {
		is, err := jsonSize(&it)
		if err != nil {
			return err
		}
		if p.size+is > p.budget && (n > 0 || p.cur.entries() > 0) {
			if n > 0 {
				put(entry)
			}
			p.flush()
			entry, n = head, 0
			p.size = hs
		}
		add(&entry, it)
		n++
		p.size += is
	}
	put(entry)
	return nil
}

func jsonSize(v any) (int, error) {
	b, err := json.Marshal(v)
	return len(b), err
}

// Merge puts the parts of a split table back together: the parts of one
// table, each once, whatever their order. A Broker (or Channel) found in
// several parts must have the same fields in each but its Triggers (or
// Subscriptions), which are put together. A single table without Shard is
// returned as it is.
func Merge(parts []*Table) (*Table, error) {
	if len(parts) == 1 && parts[0].Shard == nil {
		return parts[0], nil
	}
	if len(parts) == 0 {
		return nil, errors.New("merging routing tables: no part")
	}
	first := parts[0].Shard
	if first == nil {
		return nil, errors.New("merging routing tables: a part does not say which one it is (no shard)")
	}
	seen := make([]bool, first.Count)
	for _, p := range parts {
		s := p.Shard
		switch {
		case s == nil:
			return nil, errors.New("merging routing tables: a part does not say which one it is (no shard)")
		case s.Table != first.Table || s.Count != first.Count:
			return nil, fmt.Errorf("merging routing tables: part %d of %d of table %s with part %d of %d of table %s", first.Index, first.Count, first.Table, s.Index, s.Count, s.Table)
		case s.Index < 0 || s.Index >= s.Count:
			return nil, fmt.Errorf("merging routing tables: part %d of %d", s.Index, s.Count)
		case seen[s.Index]:
			return nil, fmt.Errorf("merging routing tables: part %d twice", s.Index)
		}
		seen[s.Index] = true
	}
	if len(parts) != first.Count {
		var missing []string
		for i, ok := range seen {
			if !ok {
				missing = append(missing, strconv.Itoa(i))
			}
		}
		return nil, fmt.Errorf("merging routing tables: parts %s of %d are missing", strings.Join(missing, ", "), first.Count)
	}
	ordered := slices.Clone(parts)
	slices.SortFunc(ordered, func(a, b *Table) int { return cmp.Compare(a.Shard.Index, b.Shard.Index) })

	out := &Table{APIVersion: APIVersion, Kind: Kind}
	brokers := map[string]int{}
	channels := map[string]int{}
	for _, p := range ordered {
		for _, b := range p.Brokers {
			i, ok := brokers[b.Key()]
			if !ok {
				brokers[b.Key()] = len(out.Brokers)
				b.Triggers = slices.Clone(b.Triggers)
				out.Brokers = append(out.Brokers, b)
				continue
			}
			have := &out.Brokers[i]
			if !sameHead(*have, b, func(x *Broker) { x.Triggers = nil }) {
				return nil, fmt.Errorf("merging routing tables: broker %s differs between parts", b.Key())
			}
			have.Triggers = append(have.Triggers, b.Triggers...)
		}
		for _, c := range p.Channels {
			i, ok := channels[c.Key()]
			if !ok {
				channels[c.Key()] = len(out.Channels)
				c.Subscriptions = slices.Clone(c.Subscriptions)
				out.Channels = append(out.Channels, c)
				continue
			}
			have := &out.Channels[i]
			if !sameHead(*have, c, func(x *Channel) { x.Subscriptions = nil }) {
				return nil, fmt.Errorf("merging routing tables: channel %s differs between parts", c.Key())
			}
			have.Subscriptions = append(have.Subscriptions, c.Subscriptions...)
		}
		// A source is small and never split; Validate refuses one in
		// two parts.
		out.PingSources = append(out.PingSources, p.PingSources...)
		out.Sources = append(out.Sources, p.Sources...)
		// A flow has no items to split: each is in one part.
		out.Sequences = append(out.Sequences, p.Sequences...)
		out.Parallels = append(out.Parallels, p.Parallels...)
	}
	if err := out.Validate(); err != nil {
		return nil, fmt.Errorf("merging routing tables: %w", err)
	}
	for i := range out.Brokers {
		if err := unique("trigger", out.Brokers[i].Triggers, func(t Trigger) Source { return t.Source }); err != nil {
			return nil, err
		}
	}
	for i := range out.Channels {
		if err := unique("subscription", out.Channels[i].Subscriptions, func(s Subscription) Source { return s.Source }); err != nil {
			return nil, err
		}
	}
	if err := unique("sequence", out.Sequences, func(s Sequence) Source { return s.Source }); err != nil {
		return nil, err
	}
	if err := unique("parallel", out.Parallels, func(p Parallel) Source { return p.Source }); err != nil {
		return nil, err
	}
	return out, nil
}

// sameHead tells whether a and b are equal once strip has removed their
// lists.
func sameHead[T any](a, b T, strip func(*T)) bool {
	strip(&a)
	strip(&b)
	return reflect.DeepEqual(a, b)
}

func unique[T any](kind string, items []T, obj func(T) Source) error {
	seen := make(map[string]bool, len(items))
	for _, it := range items {
		k := obj(it).Key()
		if seen[k] {
			return fmt.Errorf("merging routing tables: %s %s is in two parts", kind, k)
		}
		seen[k] = true
	}
	return nil
}

// Read reads the routing table at path: an encoded table (Decode), or a
// directory holding the parts of a split table (ShardFile names), which it
// merges. It also returns what it read, so that a caller polling path can
// tell whether the table changed.
func Read(path string) (*Table, []byte, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, nil, fmt.Errorf("reading the routing table: %w", err)
	}
	if !info.IsDir() {
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the routing table: %w", err)
		}
		t, err := Decode(data)
		if err != nil {
			return nil, data, fmt.Errorf("%s: %w", path, err)
		}
		if t.Shard != nil {
			return nil, data, fmt.Errorf("%s: part %d of %d of a split table: read the directory that holds every part", path, t.Shard.Index, t.Shard.Count)
		}
		return t, data, nil
	}
	// A ConfigMap volume also holds ..data and timestamped directories;
	// only the parts count.
	files, err := filepath.Glob(filepath.Join(path, "routing-table-*.json"))
	if err != nil {
		return nil, nil, fmt.Errorf("reading the routing table: %w", err)
	}
	if len(files) == 0 {
		return nil, nil, fmt.Errorf("reading the routing table: no %s in %s", ShardFile(0), path)
	}
	slices.Sort(files)
	var all bytes.Buffer
	parts := make([]*Table, 0, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return nil, nil, fmt.Errorf("reading the routing table: %w", err)
		}
		all.Write(data)
		p, err := Decode(data)
		if err != nil {
			return nil, all.Bytes(), fmt.Errorf("%s: %w", f, err)
		}
		if p.Shard == nil && len(files) > 1 {
			return nil, all.Bytes(), fmt.Errorf("%s: a whole table among the parts of a split one", f)
		}
		parts = append(parts, p)
	}
	t, err := Merge(parts)
	if err != nil {
		return nil, all.Bytes(), fmt.Errorf("%s: %w", path, err)
	}
	return t, all.Bytes(), nil
}
