package natsserver

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

func startServer(t *testing.T, opts Options) *Server {
	t.Helper()
	s, err := Start(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Shutdown(ctx); err != nil {
			t.Error(err)
		}
	})
	return s
}

func jetStream(t *testing.T, s *Server) jetstream.JetStream {
	t.Helper()
	nc, err := s.Connect("test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

func TestMessagesSurviveRestart(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dir := t.TempDir()

	first, err := Start(Options{StoreDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got := first.ClientURL(); got != "" {
		t.Errorf("ClientURL without a listen address = %q, want none", got)
	}
	nc, err := first.Connect("writer")
	if err != nil {
		t.Fatal(err)
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage}); err != nil {
		t.Fatal(err)
	}
	if _, err := js.Publish(ctx, "s", []byte("kept")); err != nil {
		t.Fatal(err)
	}
	nc.Close()
	if err := first.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	second := startServer(t, Options{StoreDir: dir})
	stream, err := jetStream(t, second).Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	msg, err := stream.GetMsg(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(msg.Data); got != "kept" {
		t.Errorf("message after restart = %q, want %q", got, "kept")
	}
}

func TestListenAddrOpensPort(t *testing.T) {
	s := startServer(t, Options{StoreDir: t.TempDir(), ListenAddr: "127.0.0.1:0"})
	if url := s.ClientURL(); !strings.HasPrefix(url, "nats://127.0.0.1:") {
		t.Errorf("ClientURL = %q, want a loopback nats:// URL", url)
	}
}

// TestFullStoreRefusesPublish shows that a capped store refuses a publish with
// an error instead of dropping older messages: the runtime relies on it to
// answer 503 rather than 202 for an event it could not keep.
func TestFullStoreRefusesPublish(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s := startServer(t, Options{StoreDir: t.TempDir(), MaxStoreBytes: 64 << 10})
	js := jetStream(t, s)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage, Discard: jetstream.DiscardNew}); err != nil {
		t.Fatal(err)
	}
	payload := make([]byte, 1024)
	var accepted int
	for accepted = 0; accepted < 1000; accepted++ {
		if _, err := js.Publish(ctx, "s", payload); err != nil {
			var apiErr *jetstream.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("publish %d failed with %v, want a JetStream API error", accepted, err)
			}
			break
		}
	}
	if accepted == 1000 {
		t.Fatal("every publish was accepted by a 64 KiB store")
	}
	info, err := js.Stream(ctx, "S")
	if err != nil {
		t.Fatal(err)
	}
	if got := info.CachedInfo().State.Msgs; got != uint64(accepted) {
		t.Errorf("stream holds %d messages, want the %d accepted ones", got, accepted)
	}
}
