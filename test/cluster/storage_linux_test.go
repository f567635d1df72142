package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

// TestFullVolumeIsReported runs the runtime on a small tmpfs and fills it:
// the Broker's IngressReady condition in the cluster turns False with
// reason StorageFull, without waiting for a resync, and back to True once
// space is freed.
func TestFullVolumeIsReported(t *testing.T) {
	data := rig.SmallFilesystem(t, "32m")

	c := newCluster(t)
	ns := c.env.Namespace(t)
	dir := t.TempDir()
	for name, content := range map[string]string{
		"knc.yaml":    "apiVersion: config.knc.dev/v1alpha1\nkind: Config\ndefaultNamespace: " + ns + "\n",
		"broker.yaml": "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: default\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, objs := build(t, dir)
	c.deploy(t, objs)
	table := rig.NewMountedTable(t.TempDir())
	mount(t, table, c.routesConfigMap(t, ns))
	rt := c.startRuntime(t, ns, table, "--data-dir", filepath.Join(data, "knc"))
	c.waitReady(t, knative(objs))

	filler := filepath.Join(data, "filler")
	rig.Fill(t, filler)
	// The store notices when a write fails: send events until one does.
	broker := rt.URL + "/brokers/" + ns + "/default"
	rig.Poll(t, t.Context(), time.Minute, func() error {
		if code := post(t, broker, "fill", "t"); code != 503 {
			return errors.New("the ingress still accepts events on a full volume")
		}
		return nil
	})
	c.waitCondition(t, "Broker", ns, "default", "IngressReady", "False", "StorageFull")

	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	c.waitCondition(t, "Broker", ns, "default", "IngressReady", "True", "IngressReady")
	if code := post(t, broker, "after", "t"); code != 202 {
		t.Errorf("POST after space was freed: %d", code)
	}
}
