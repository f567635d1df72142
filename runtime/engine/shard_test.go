package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/pipeline"
)

// TestShardedIngress sends events at once to a Broker with four ingress
// shards: the shards store them, and each event is delivered once.
func TestShardedIngress(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"})), IngressShards: 4})
	const events = 200
	postAtOnce(t, e.URL()+"/brokers/ns/b", events)
	eventually(t, 20*time.Second, "every event delivered", func() bool { return rec.count() >= events })
	checkDelivered(t, rec, events)
	names := pipeline.NamesFor(pipeline.KindBroker, routing.Source{Namespace: "ns", Name: "b"})
	used := 0
	for i := range 4 {
		_, stream := names.IngressShard(i)
		s, err := e.js.Stream(context.Background(), stream)
		if err != nil {
			t.Fatalf("shard %d: %v", i, err)
		}
		if s.CachedInfo().State.LastSeq > 0 {
			used++
		}
	}
	// How many shards take events depends on how fast the store answers:
	// a shard overflows to the next only while it has batches in flight,
	// which TestShardChoice checks without timing. Here every shard exists
	// and the events went through them.
	if used == 0 {
		t.Errorf("%d events were delivered but no ingress shard stored any", events)
	}
}

// TestFewerShardsRouteWhatMoreLeft stores events in four shards without
// routing them, then restarts with one: the events of the other three are
// routed all the same.
func TestFewerShardsRouteWhatMoreLeft(t *testing.T) {
	dir := t.TempDir()
	rec := newRecorder(t)
	table := brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"}))
	first := startEngine(t, Options{Table: table, DataDir: dir, IngressShards: 4})
	first.mu.Lock()
	for _, pl := range first.served {
		for _, s := range pl.routes {
			s.Stop()
		}
	}
	first.mu.Unlock()
	const events = 20
	for i := range events {
		if code := post(t, first.URL()+"/brokers/ns/b", fmt.Sprint(i), "x"); code != http.StatusAccepted {
			t.Fatalf("POST = %d", code)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := rec.count(); n != 0 {
		t.Fatalf("%d events delivered before the restart, want none", n)
	}
	startEngine(t, Options{Table: table, DataDir: dir, IngressShards: 1})
	eventually(t, 10*time.Second, "every event delivered", func() bool { return rec.count() >= events })
	checkDelivered(t, rec, events)
}

// TestFsyncDurability checks the options fsync durability sets, and that
// events go through.
func TestFsyncDurability(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"})), Durability: DurabilityFsync, IngressShards: 3})
	got := []any{e.opts.Durability, e.opts.IngressShards}
	if diff := cmp.Diff([]any{DurabilityFsync, 3}, got); diff != "" {
		t.Errorf("(Durability, IngressShards) (-want +got):\n%s", diff)
	}
	for i := range 10 {
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint(i), "x"); code != http.StatusAccepted {
			t.Fatalf("POST = %d", code)
		}
	}
	eventually(t, 10*time.Second, "every event delivered", func() bool { return rec.count() >= 10 })
	checkDelivered(t, rec, 10)
}

// TestFsyncShardsTakeTurns posts events at once to a Broker whose four
// shards take turns to store with fsync durability: every event is
// delivered, once.
func TestFsyncShardsTakeTurns(t *testing.T) {
	rec := newRecorder(t)
	e := startEngine(t, Options{Table: brokerTable(trigger("t", rec.srv.URL, map[string]string{"type": "x"})), Durability: DurabilityFsync, IngressShards: 4})
	const events = 200
	postAtOnce(t, e.URL()+"/brokers/ns/b", events)
	eventually(t, 30*time.Second, "every event delivered", func() bool { return rec.count() >= events })
	checkDelivered(t, rec, events)
}

func TestDurabilityOptions(t *testing.T) {
	tests := []struct {
		name    string
		opts    Options
		want    []any // Durability, IngressShards
		wantErr bool
	}{
		{name: "default", want: []any{DurabilityFile, 1}},
		{name: "fsync", opts: Options{Durability: DurabilityFsync}, want: []any{DurabilityFsync, 1}},
		{name: "shards", opts: Options{Durability: DurabilityFsync, IngressShards: 3}, want: []any{DurabilityFsync, 3}},
		{name: "file shards", opts: Options{IngressShards: 2}, want: []any{DurabilityFile, 2}},
		{name: "unknown", opts: Options{Durability: "disk"}, wantErr: true},
		{name: "too many shards", opts: Options{IngressShards: MaxIngressShards + 1}, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := tt.opts
			o.Table, o.DataDir = brokerTable(), t.TempDir()
			err := o.setDefaults()
			if (err != nil) != tt.wantErr {
				t.Fatalf("setDefaults: %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				return
			}
			if diff := cmp.Diff(tt.want, []any{o.Durability, o.IngressShards}); diff != "" {
				t.Errorf("(Durability, IngressShards) (-want +got):\n%s", diff)
			}
		})
	}
}

// postAtOnce posts n events of type x, with ids 0 to n-1, all at once,
// each expecting 202.
func postAtOnce(t *testing.T, url string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			if code := post(t, url, fmt.Sprint(i), "x"); code != http.StatusAccepted {
				t.Errorf("POST = %d", code)
			}
		})
	}
	wg.Wait()
}

// checkDelivered checks that rec got the events "0" to "n-1", each once.
func checkDelivered(t *testing.T, rec *recorder, n int) {
	t.Helper()
	var want []string
	for i := range n {
		want = append(want, fmt.Sprint(i))
	}
	got := rec.ids()
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("delivered ids (-want +got):\n%s", diff)
	}
}
