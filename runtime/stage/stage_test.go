package stage

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// TestRepullAfterJetStreamRestart restarts JetStream while the stage has
// its one slot in an outstanding pull request, then stores a message. The
// new JetStream does not know the old request, so without Repull the stage
// would wait for it to expire (an hour here) before it pulled the message.
func TestRepullAfterJetStreamRestart(t *testing.T) {
	storeDir := t.TempDir()
	srv, js := startJetStream(t, storeDir)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	consumer := createConsumer(ctx, t, js)

	var processed atomic.Int32
	s := New("test", consumer, 1, slog.New(slog.DiscardHandler), func(_ context.Context, m jetstream.Msg) {
		_ = m.Ack()
		processed.Add(1)
	})
	// Without Repull, only the missed heartbeats of the lost request, after
	// an hour, would end it.
	s.fetchWait, s.heartbeat = 2*time.Hour, 30*time.Minute
	s.Start(context.Background())
	t.Cleanup(s.Stop)
	poll(t, "a pull request outstanding", func() bool { return s.pulls.Load() == 1 })

	cfg := srv.JetStreamConfig()
	// EnableJetStream adds its own directory to the one it is given.
	cfg.StoreDir = storeDir
	if err := srv.ShutdownJetStream(); err != nil {
		t.Fatal(err)
	}
	if err := srv.EnableJetStream(cfg); err != nil {
		t.Fatal(err)
	}
	poll(t, "the restarted JetStream to store a message", func() bool {
		_, err := js.Publish(ctx, "work", []byte("after the restart"))
		return err == nil
	})

	s.Repull()
	poll(t, "the message stored after the restart to be processed", func() bool { return processed.Load() == 1 })
}

func startJetStream(t *testing.T, storeDir string) (*server.Server, jetstream.JetStream) {
	t.Helper()
	srv, err := server.NewServer(&server.Options{Host: "127.0.0.1", Port: -1, JetStream: true, StoreDir: storeDir, NoLog: true, NoSigs: true})
	if err != nil {
		t.Fatal(err)
	}
	go srv.Start()
	if !srv.ReadyForConnections(30 * time.Second) {
		t.Fatal("the NATS server did not start")
	}
	t.Cleanup(srv.Shutdown)
	nc, err := nats.Connect(srv.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return srv, js
}

func createConsumer(ctx context.Context, t *testing.T, js jetstream.JetStream) jetstream.Consumer {
	t.Helper()
	stream, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "WORK", Subjects: []string{"work"}, Storage: jetstream.FileStorage})
	if err != nil {
		t.Fatal(err)
	}
	consumer, err := stream.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "worker", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	return consumer
}

func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
