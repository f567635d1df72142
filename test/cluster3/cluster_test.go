package cluster3

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/knc-dev/knc/runtime/natsserver"
	"github.com/knc-dev/knc/test/rig"
)

var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(rig.MainWithKnc(m, &kncBinary))
}

// natsCluster is three NATS servers with JetStream, routed to each other
// on loopback.
type natsCluster struct {
	nodes []*natsserver.Server
	urls  []string
	down  []atomic.Bool
}

func startNATSCluster(t *testing.T) *natsCluster {
	t.Helper()
	var routes []string
	var lns []net.Listener
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		routes = append(routes, "nats-route://"+ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	c := &natsCluster{down: make([]atomic.Bool, 3)}
	dir := t.TempDir()
	for i := range 3 {
		s, err := natsserver.Start(natsserver.Options{
			StoreDir:   filepath.Join(dir, fmt.Sprint("n", i)),
			ListenAddr: "127.0.0.1:0",
			MaxPayload: 2 << 20,
			Cluster: &natsserver.Cluster{
				Name:       "knc",
				ServerName: fmt.Sprint("n", i),
				ListenAddr: strings.TrimPrefix(routes[i], "nats-route://"),
				Routes:     routes,
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		c.nodes = append(c.nodes, s)
		c.urls = append(c.urls, s.ClientURL())
	}
	t.Cleanup(func() {
		for i, s := range c.nodes {
			if !c.down[i].Load() {
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				_ = s.Shutdown(ctx)
				cancel()
			}
		}
	})
	return c
}

func (c *natsCluster) kill(t *testing.T, i int) {
	t.Helper()
	c.down[i].Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.nodes[i].Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestNodeAndRuntimeLoss runs two runtimes on a three-node JetStream
// cluster with R3 streams; under load it stops one NATS node, then kills
// one runtime with SIGKILL. Every accepted event is delivered.
func TestNodeAndRuntimeLoss(t *testing.T) {
	nats := startNATSCluster(t)
	sub := rig.NewSubscriber(t)
	// Slower than the ingress, so that deliveries are pending when the
	// runtime dies.
	sub.SetConcurrency(3)
	sub.SetDelay(10 * time.Millisecond)
	table := rig.Table(rig.Broker("b", rig.Trigger("t", sub.URL(), rig.Retrying(20, 100*time.Millisecond, 2*time.Second, ""))))
	urls := strings.Join(nats.urls, ",")
	a := rig.StartKnc(t, kncBinary, table, "--nats-url", urls, "--stream-replicas", "3")
	b := rig.StartKnc(t, kncBinary, table, "--nats-url", urls, "--stream-replicas", "3")

	targets := []string{a.BrokerURL(rig.Namespace, "b"), b.BrokerURL(rig.Namespace, "b")}
	l := rig.StartLoad(rig.LoadConfig{Targets: func() []string { return targets }, Senders: 8, Rate: 400})
	l.WaitAccepted(t, 800, 30*time.Second)
	nats.kill(t, 0)
	t.Logf("NATS node n0 stopped after %d accepted events", l.AcceptedCount())
	l.WaitAccepted(t, 1600, 30*time.Second)
	backlog := l.AcceptedCount() - sub.AckedCount()
	a.Kill()
	t.Logf("runtime A killed after %d accepted events, %d not yet delivered", l.AcceptedCount(), backlog)
	l.WaitAccepted(t, 2400, 30*time.Second)
	l.Stop()

	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	acct, err := rig.ReadAccounting(b.URL(), "t")
	if err != nil {
		t.Fatal(err)
	}
	f.Metrics["runtime B delivered"] = acct.Delivered
	f.Report(t)
	if backlog <= 0 {
		t.Errorf("nothing was pending when runtime A was killed: the test proves nothing")
	}
}

// TestEmbeddedClusterLosesANode runs three runtimes whose embedded NATS
// servers form one JetStream cluster, as the StatefulSet knc build renders
// for runtime.replicas: 3 does, with R3 streams. Under load, one runtime
// and its server are killed with SIGKILL and later restarted on the same
// data directory, rejoining the cluster. Every accepted event is
// delivered.
func TestEmbeddedClusterLosesANode(t *testing.T) {
	var lns []net.Listener
	var addrs, routes []string
	for range 3 {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		lns = append(lns, ln)
		addrs = append(addrs, ln.Addr().String())
		routes = append(routes, "nats-route://"+ln.Addr().String())
	}
	for _, ln := range lns {
		ln.Close()
	}
	sub := rig.NewSubscriber(t)
	sub.SetConcurrency(3)
	sub.SetDelay(10 * time.Millisecond)
	table := rig.Table(rig.Broker("b", rig.Trigger("t", sub.URL(), rig.Retrying(20, 100*time.Millisecond, 2*time.Second, ""))))
	var nodes []*rig.Knc
	for i := range 3 {
		nodes = append(nodes, rig.NewKnc(t, kncBinary, table,
			"--cluster-name", "knc", "--cluster-addr", addrs[i], "--cluster-routes", strings.Join(routes, ","),
			"--server-name", fmt.Sprint("knc-runtime-", i), "--stream-replicas", "3"))
	}
	rig.StartTogether(nodes...)

	targets := func() []string {
		var out []string
		for _, k := range nodes {
			out = append(out, k.BrokerURL(rig.Namespace, "b"))
		}
		return out
	}
	l := rig.StartLoad(rig.LoadConfig{Targets: targets, Senders: 8, Rate: 400})
	l.WaitAccepted(t, 800, 30*time.Second)
	backlog := l.AcceptedCount() - sub.AckedCount()
	nodes[0].Kill()
	t.Logf("node 0 killed after %d accepted events, %d not yet delivered", l.AcceptedCount(), backlog)
	l.WaitAccepted(t, 1600, 30*time.Second)
	nodes[0].Start()
	t.Logf("node 0 back after %d accepted events", l.AcceptedCount())
	l.WaitAccepted(t, 2400, 30*time.Second)
	l.Stop()

	f := rig.Settle(45*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	f.Report(t)
	if backlog <= 0 {
		t.Errorf("nothing was pending when node 0 was killed: the test proves nothing")
	}
}
