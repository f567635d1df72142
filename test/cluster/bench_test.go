package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

// BenchmarkReadyTriggers measures, for a Broker with 200 Triggers applied
// to the API server, the time from starting knc runtime to every object
// being Ready for its generation: the first status pass, written through
// /status with the generated RBAC. Run it with -benchtime=1x; each
// iteration uses a new namespace.
func BenchmarkReadyTriggers(b *testing.B) {
	const triggers = 200
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
		b.StartTimer()
		start := time.Now()
		c.startRuntime(b, ns, table)
		c.waitReady(b, knative(objs))
		b.ReportMetric(time.Since(start).Seconds(), "s-to-ready")
	}
}
