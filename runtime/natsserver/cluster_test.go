package natsserver

import (
	"context"
	"fmt"
	"net"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// freeAddrs returns n loopback addresses nothing listens on right now.
func freeAddrs(t *testing.T, n int) []string {
	t.Helper()
	var out []string
	var lns []net.Listener
	for range n {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		out = append(out, ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	return out
}

// TestClusterReplicatesStreams forms a three-node cluster on loopback,
// stores messages in a stream replicated on all three, stops the node the
// client was connected to, and reads every message from another node.
func TestClusterReplicatesStreams(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	routeAddrs := freeAddrs(t, 3)
	var routes []string
	for _, a := range routeAddrs {
		routes = append(routes, "nats-route://"+a)
	}
	dir := t.TempDir()
	var nodes []*Server
	for i := range 3 {
		s, err := Start(Options{
			StoreDir:   filepath.Join(dir, fmt.Sprint("n", i)),
			ListenAddr: "127.0.0.1:0",
			Cluster: &Cluster{
				Name:       "knc-test",
				ServerName: fmt.Sprint("n", i),
				ListenAddr: routeAddrs[i],
				Routes:     routes,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, s)
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			_ = s.Shutdown(ctx)
		})
	}

	connect := func(s *Server) jetstream.JetStream {
		nc, err := nats.Connect(s.ClientURL())
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
	js := connect(nodes[0])
	cfg := jetstream.StreamConfig{Name: "S", Subjects: []string{"s"}, Storage: jetstream.FileStorage, Replicas: 3}
	// The meta leader is elected some time after the nodes start, and an
	// API request sent while there is none gets no answer: every request
	// has a short timeout and is retried.
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := js.CreateOrUpdateStream(actx, cfg)
		acancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("creating an R3 stream: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	const n = 50
	for i := range n {
		if _, err := js.Publish(ctx, "s", []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	if err := nodes[0].Shutdown(ctx); err != nil {
		t.Fatal(err)
	}

	other := connect(nodes[1])
	var got uint64
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		s, err := other.Stream(actx, "S")
		acancel()
		if err == nil {
			got = s.CachedInfo().State.Msgs
			if got == n {
				break
			}
		}
		time.Sleep(100 * time.Millisecond)
	}
	if got != n {
		t.Fatalf("after losing a node the stream holds %d messages, want %d", got, n)
	}
	// Two of three nodes are a quorum: writes go on once the stream has a
	// leader again.
	for {
		actx, acancel := context.WithTimeout(ctx, 2*time.Second)
		_, err := other.Publish(actx, "s", []byte("after"))
		acancel()
		if err == nil {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("publish with two of three nodes: %v", err)
		}
	}
}

func TestClusterOptionsAreChecked(t *testing.T) {
	tests := []struct {
		name    string
		cluster Cluster
	}{
		{"no name", Cluster{ServerName: "a", ListenAddr: "127.0.0.1:0"}},
		{"no server name", Cluster{Name: "c", ListenAddr: "127.0.0.1:0"}},
		{"no listen address", Cluster{Name: "c", ServerName: "a"}},
		{"bad listen address", Cluster{Name: "c", ServerName: "a", ListenAddr: "nowhere"}},
		{"bad route", Cluster{Name: "c", ServerName: "a", ListenAddr: "127.0.0.1:0", Routes: []string{"::"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.cluster
			if s, err := Start(Options{StoreDir: t.TempDir(), Cluster: &c}); err == nil {
				_ = s.Shutdown(context.Background())
				t.Fatal("Start succeeded")
			}
		})
	}
}
