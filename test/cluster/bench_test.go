package cluster

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/internal/kubetest"
	"github.com/knc-dev/knc/test/rig"
)

// BenchmarkReadyTriggers measures, for a Broker with 200 Triggers applied
// to the API server, the time from starting knc-runtime to /readyz
// answering 200 (s-to-readyz) and to every object being Ready for its
// generation (s-to-ready): the first status pass, written through /status
// with the generated RBAC; and the runtime's resident memory once it is
// idle (idle-rss-MB), read five seconds after that. Run it with
// -benchtime=1x; each iteration uses a new namespace.
// KNC_BENCH_TRIGGERS sets the number of Triggers, and KNC_BENCH_RUNTIME
// the binary to start: knc-runtime, or a knc, which is run as knc runtime
// (such as one built from an earlier commit, to compare).
func BenchmarkReadyTriggers(b *testing.B) {
	triggers := 200
	if n, err := strconv.Atoi(os.Getenv("KNC_BENCH_TRIGGERS")); err == nil && n > 0 {
		triggers = n
	}
	bin := runtimeBinary
	if p := os.Getenv("KNC_BENCH_RUNTIME"); p != "" {
		bin = p
	}
	c := newCluster(b)
	for b.Loop() {
		b.StopTimer()
		ns := c.env.Namespace(b)
		dir := b.TempDir()
		var manifests strings.Builder
		manifests.WriteString("apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: default}\n")
		for i := range triggers {
			fmt.Fprintf(&manifests, "---\napiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: t%03d}\nspec:\n  broker: default\n  filter: {attributes: {type: t%03d}}\n  subscriber: {uri: \"http://127.0.0.1:9/%d\"}\n", i, i, i)
		}
		write := func(name, content string) {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		write("knc.yaml", "apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: "+ns+"\n")
		write("eventing.yaml", manifests.String())
		_, objs := build(b, dir)
		c.deploy(b, objs)
		table := rig.NewMountedTable(b.TempDir())
		mount(b, table, c.routesConfigMap(b, ns))
		cfg, err := c.env.ServiceAccountConfig(b.Context(), ns, "knc-runtime")
		if err != nil {
			b.Fatal(err)
		}
		kubeconfig, err := kubetest.KubeConfig(cfg)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		rt := rig.StartClusterRuntime(b, bin, kubeconfig, ns, table.Path())
		rig.Poll(b, b.Context(), time.Minute, func() error {
			resp, err := http.Get(rt.AdminURL + "/readyz")
			if err != nil {
				return err
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return fmt.Errorf("/readyz: %s", resp.Status)
			}
			return nil
		})
		b.ReportMetric(time.Since(start).Seconds(), "s-to-readyz")
		c.waitReady(b, knative(objs))
		b.ReportMetric(time.Since(start).Seconds(), "s-to-ready")
		b.StopTimer()
		// Idle: no event, and the status pass written.
		time.Sleep(5 * time.Second)
		b.ReportMetric(float64(residentKB(b, rt.PID()))/1024, "idle-rss-MB")
		b.StartTimer()
	}
}

// residentKB is the resident memory of process pid, from /proc.
func residentKB(b *testing.B, pid int) int {
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
			if err != nil {
				b.Fatal(err)
			}
			return kb
		}
	}
	b.Fatalf("no VmRSS in /proc/%d/status", pid)
	return 0
}
