package engine

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/routing"
)

// startExternalNATS runs a NATS server with JetStream on loopback that
// requires a user name and password, as a NATS cluster managed apart from
// knc would.
func startExternalNATS(t *testing.T) string {
	t.Helper()
	ns, err := server.NewServer(&server.Options{
		Host: "127.0.0.1", Port: server.RANDOM_PORT,
		JetStream: true, StoreDir: t.TempDir(),
		Username: "knc", Password: "pass",
		NoLog: true, NoSigs: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	ns.Start()
	if !ns.ReadyForConnections(10 * time.Second) {
		t.Fatal("NATS server not ready")
	}
	t.Cleanup(func() {
		ns.Shutdown()
		ns.WaitForShutdown()
	})
	return ns.ClientURL()
}

// TestReplicasShareExternalNATS runs two engines on one external NATS
// server: each accepts events, both deliver (they share the durable
// consumers), every event is delivered exactly once, and starting the
// second engine does not disturb the first one's consumers.
func TestReplicasShareExternalNATS(t *testing.T) {
	url := startExternalNATS(t)
	sub := newRecorder(t)
	held := routing.Trigger{
		Source:     routing.Source{Namespace: "ns", Name: "held"},
		Subscriber: routing.Destination{Ref: &routing.Ref{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "missing"}},
	}
	table := brokerTable(trigger("a", sub.srv.URL, nil), held)
	if _, err := New(Options{Table: table, NATS: ExternalNATS{URL: url}}); err != nil {
		t.Fatalf("an engine on external NATS needs no data directory: %v", err)
	}
	creds := ExternalNATS{URL: url, User: "knc", Password: "pass"}
	first := startEngine(t, Options{Table: table, NATS: creds})
	second := startEngine(t, Options{Table: table, NATS: creds})

	const events = 200
	for i := range events {
		e := first
		if i%2 == 1 {
			e = second
		}
		if code := post(t, e.URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST %d = %d, want 202", i, code)
		}
	}
	eventually(t, 20*time.Second, "every event delivered", func() bool { return sub.count() >= events })
	counts := map[string]int{}
	for _, id := range sub.ids() {
		counts[id]++
	}
	for i := range events {
		if n := counts[fmt.Sprint("e", i)]; n != 1 {
			t.Errorf("event e%d delivered %d times, want once", i, n)
		}
	}
	// The subscriber has an event before its engine counts it delivered,
	// and the held route's deliveries are counted as they are stored,
	// which may come after the other route's delivery.
	var a, b, h1, h2 outcomes
	deadline := time.Now().Add(10 * time.Second)
	for {
		a, b = accountOf(t, first)["trigger/a"], accountOf(t, second)["trigger/a"]
		h1, h2 = accountOf(t, first)["trigger/held"], accountOf(t, second)["trigger/held"]
		if (a.Delivered+b.Delivered >= events && h1.Accepted+h2.Accepted >= events) || time.Now().After(deadline) {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Logf("deliveries made by the first engine: %v, by the second: %v", a.Delivered, b.Delivered)
	if a.Delivered+b.Delivered != events {
		t.Errorf("delivered %v + %v, want %d", a.Delivered, b.Delivered, events)
	}
	if a.Delivered == 0 || b.Delivered == 0 {
		t.Errorf("one engine did all the work (%v and %v): the consumers are not shared", a.Delivered, b.Delivered)
	}
	if h1.Accepted+h2.Accepted != events {
		t.Errorf("held deliveries accepted %v + %v, want %d", h1.Accepted, h2.Accepted, events)
	}

	// One set of durable consumers, whatever the number of replicas.
	nc, err := nats.Connect(url, nats.UserInfo("knc", "pass"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	names := map[string][]string{}
	for _, stream := range []string{"knc_broker_ns_b_in", "knc_broker_ns_b_out"} {
		s, err := js.Stream(ctx, stream)
		if err != nil {
			t.Fatal(err)
		}
		l := s.ConsumerNames(ctx)
		for n := range l.Name() {
			names[stream] = append(names[stream], n)
		}
	}
	if len(names["knc_broker_ns_b_in"]) != 1 || len(names["knc_broker_ns_b_out"]) != 2 {
		t.Errorf("consumers = %v, want route on the ingress stream, dispatch and unpark on the delivery stream", names)
	}
}

func TestExternalNATSRefusesWrongCredentials(t *testing.T) {
	url := startExternalNATS(t)
	e, err := New(Options{Table: brokerTable(), NATS: ExternalNATS{URL: url, User: "knc", Password: "wrong"}, HTTPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := e.Start(ctx); err == nil {
		_ = e.Shutdown(context.Background())
		t.Fatal("Start succeeded with a wrong password")
	}
}

// TestReplicasStartAndReloadTogether starts three engines on one external
// NATS server at the same moment, then reloads all three at once with a
// table in which a held Trigger has become ready, which makes each of them
// recreate the shared unpark consumer: none fails, and every held delivery
// reaches the Trigger's subscriber.
func TestReplicasStartAndReloadTogether(t *testing.T) {
	url := startExternalNATS(t)
	sub, later := newRecorder(t), newRecorder(t)
	held := routing.Trigger{
		Source:     routing.Source{Namespace: "ns", Name: "held"},
		Subscriber: routing.Destination{Ref: &routing.Ref{APIVersion: "v1", Kind: "Service", Namespace: "ns", Name: "missing"}},
	}
	first := brokerTable(trigger("a", sub.srv.URL, nil), held)
	second := brokerTable(trigger("a", sub.srv.URL, nil), trigger("held", later.srv.URL, nil))

	together := func(n int, f func(i int) error) []error {
		errs := make([]error, n)
		var wg sync.WaitGroup
		for i := range n {
			wg.Go(func() { errs[i] = f(i) })
		}
		wg.Wait()
		return errs
	}
	var engines []*Engine
	for range 3 {
		e, err := New(Options{Table: first, NATS: ExternalNATS{URL: url, User: "knc", Password: "pass"}, HTTPAddr: "127.0.0.1:0", Logger: testLogger(t)})
		if err != nil {
			t.Fatal(err)
		}
		engines = append(engines, e)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = e.Shutdown(ctx)
		})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for i, err := range together(3, func(i int) error { return engines[i].Start(ctx) }) {
		if err != nil {
			t.Fatalf("engine %d: Start: %v", i, err)
		}
	}
	const events = 90
	for i := range events {
		if code := post(t, engines[i%3].URL()+"/brokers/ns/b", fmt.Sprint("e", i), "t"); code != http.StatusAccepted {
			t.Fatalf("POST %d = %d", i, code)
		}
	}
	eventually(t, 20*time.Second, "the deliveries of the ready Trigger", func() bool { return sub.count() >= events })
	for i, err := range together(3, func(i int) error { return engines[i].Reload(ctx, second) }) {
		if err != nil {
			t.Errorf("engine %d: Reload: %v", i, err)
		}
	}
	eventually(t, 30*time.Second, "every held delivery", func() bool {
		seen := map[string]bool{}
		for _, id := range later.ids() {
			seen[id] = true
		}
		return len(seen) == events
	})
	t.Logf("held deliveries: %d events, %d requests", events, later.count())
}

func TestRedactURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"nats://127.0.0.1:4222", "nats://127.0.0.1:4222"},
		{"nats://user:secret@nats:4222", "nats://***@nats:4222"},
		{"tls://token@a:4222,nats://b:4222", "tls://***@a:4222,nats://b:4222"},
	}
	for _, tt := range tests {
		if got := redactURL(tt.in); got != tt.want {
			t.Errorf("redactURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestUnchangedStreamIsNotUpdated checks that ensureStream sends an update
// only when a setting knc chooses has changed: replicas that start or
// reload together then do not rewrite a stream while creating consumers.
func TestUnchangedStreamIsNotUpdated(t *testing.T) {
	nc, err := nats.Connect(startExternalNATS(t), nats.UserInfo("knc", "pass"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	updates, err := nc.SubscribeSync("$JS.API.STREAM.UPDATE.s")
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cfg := jetstream.StreamConfig{
		Name: "s", Subjects: []string{"s.>"}, Description: "first",
		Retention: jetstream.LimitsPolicy, Storage: jetstream.FileStorage, Discard: jetstream.DiscardNew,
		Duplicates: duplicateWindow, MaxMsgs: -1, MaxBytes: -1,
	}
	changed := cfg
	changed.Description = "second"
	for i, step := range []struct {
		cfg         jetstream.StreamConfig
		wantUpdates int
	}{{cfg, 1}, {cfg, 1}, {changed, 2}, {changed, 2}} {
		if err := ensureStream(ctx, js, step.cfg); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
		// Creating the stream is tried as an update first, so the first
		// step sends one.
		if n, _, err := updates.Pending(); err != nil || n != step.wantUpdates {
			t.Errorf("after step %d: %d stream updates sent (%v), want %d", i, n, err, step.wantUpdates)
		}
	}
	s, err := js.Stream(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	if got := s.CachedInfo().Config.Description; got != "second" {
		t.Errorf("description = %q, want the changed one", got)
	}
}
