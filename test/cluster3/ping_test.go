package cluster3

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/ping"
	"github.com/knc-dev/knc/test/rig"
)

var natsURLLine = regexp.MustCompile(`knc: NATS clients can connect at (\S+)`)

// TestPingSourceOncePerTickAcrossReplicas runs three runtimes whose
// embedded servers are one JetStream cluster (R3), all firing one
// PingSource whose sink is a Broker, and steps their shared test clock
// through 20 ticks; after the 10th, one runtime is killed with SIGKILL.
// Each tick is stored once, as one event with its own id, and delivered.
func TestPingSourceOncePerTickAcrossReplicas(t *testing.T) {
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
	clockPath := filepath.Join(t.TempDir(), "clock")
	setClock := func(now time.Time) {
		t.Helper()
		tmp := clockPath + ".tmp"
		if err := os.WriteFile(tmp, []byte(now.Format(time.RFC3339Nano)), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, clockPath); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Date(2026, 3, 1, 9, 59, 30, 0, time.UTC)
	setClock(start)
	t.Setenv("KNC_TEST_CLOCK_FILE", clockPath)

	sub := rig.NewSubscriber(t)
	table := rig.Table(rig.Broker("b", rig.Trigger("t", sub.URL(), rig.Retrying(20, 100*time.Millisecond, 2*time.Second, ""))))
	table.PingSources = []routing.PingSource{{
		Source: routing.Source{Namespace: rig.Namespace, Name: "tick"}, Schedule: "* * * * *",
		Data: "tick", Sink: routing.Destination{URI: "http://knc-ingress.rig.svc.cluster.local/brokers/rig/b"},
		SinkPath: routing.BrokerPath(rig.Namespace, "b"),
	}}
	var nodes []*rig.Knc
	for i := range 3 {
		nodes = append(nodes, rig.NewKnc(t, kncBinary, table,
			"--cluster-name", "knc", "--cluster-addr", addrs[i], "--cluster-routes", strings.Join(routes, ","),
			"--server-name", fmt.Sprint("knc-runtime-", i), "--stream-replicas", "3", "--nats-addr", "127.0.0.1:0"))
	}
	rig.StartTogether(nodes...)

	const ticks, killAfter = 20, 10
	var want []string
	for i := range ticks {
		tick := time.Date(2026, 3, 1, 10, i, 0, 0, time.UTC)
		want = append(want, ping.EventID(rig.Namespace, "tick", tick))
		setClock(tick)
		rig.Eventually(t, 60*time.Second, fmt.Sprintf("tick %d to be delivered", i+1), func() bool { return sub.AckedCount() >= i+1 })
		if i+1 == killAfter {
			nodes[0].Kill()
			t.Logf("runtime 0 killed after tick %d", i+1)
		}
	}

	// Read the Broker's ingress stream through a runtime that still runs.
	m := natsURLLine.FindStringSubmatch(nodes[1].Log())
	if m == nil {
		t.Fatalf("runtime 1 printed no NATS URL:\n%s", nodes[1].Log())
	}
	nc, err := nats.Connect(m[1])
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stored := func() (uint64, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		names := js.StreamNames(ctx, jetstream.WithStreamListSubject("*.>"))
		var total uint64
		for name := range names.Name() {
			s, err := js.Stream(ctx, name)
			if err != nil {
				return 0, err
			}
			if strings.HasPrefix(s.CachedInfo().Config.Description, "ingress of broker rig/b") {
				total += s.CachedInfo().State.LastSeq
			}
		}
		return total, names.Err()
	}
	var n uint64
	rig.Eventually(t, 30*time.Second, "the ingress stream to be readable", func() bool {
		n, err = stored()
		return err == nil && n > 0
	})
	if n != ticks {
		t.Errorf("the Broker's ingress stored %d messages for %d ticks", n, ticks)
	}
	acked := sub.Acked()
	got := slices.Sorted(func(yield func(string) bool) {
		for id := range acked {
			if !yield(id) {
				return
			}
		}
	})
	slices.Sort(want)
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("ids delivered (-want +got):\n%s", d)
	}
	redelivered := 0
	for _, c := range acked {
		redelivered += c - 1
	}
	t.Logf("%d ticks stored and delivered; %d deliveries repeated after the kill (at least once)", ticks, redelivered)
}
