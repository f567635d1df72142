package e2e

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

// TestTenThousandTriggers compiles a Broker with 10,000 Triggers with knc
// build, whose routing table no longer fits in one ConfigMap and is split
// across several; serves those ConfigMaps' files with knc run, as the
// runtime's pod mounts them; and routes events to the first, a middle and
// the last Trigger, each to its own subscriber path only.
func TestTenThousandTriggers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and serves 10,000 Triggers")
	}
	const triggers = 10000
	sub := newSubscriber(t)
	src := t.TempDir()
	var manifests bytes.Buffer
	manifests.WriteString(`apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: b
  namespace: e2e
  annotations:
    eventing.knative.dev/broker.class: knc
`)
	for i := range triggers {
		fmt.Fprintf(&manifests, `---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: t%05d
  namespace: e2e
spec:
  broker: b
  filter:
    attributes:
      type: com.example.t%d
  subscriber:
    uri: %s
`, i, i, sub.url("/t/"+strconv.Itoa(i)))
	}
	if err := os.WriteFile(filepath.Join(src, "eventing.yaml"), manifests.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}

	out := filepath.Join(t.TempDir(), "deploy")
	start := time.Now()
	build := exec.Command(kncBinary, "build", src, "-o", out)
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("knc build: %v\n%s", err, b)
	}
	t.Logf("knc build of %d Triggers: %s", triggers, time.Since(start).Round(time.Millisecond))

	// Lay the ConfigMaps' files out in one directory, as the projected
	// volume of the runtime's pod does.
	parts := t.TempDir()
	runtimeYAML, err := os.ReadFile(filepath.Join(out, "namespaces", "e2e", "runtime.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, doc := range strings.Split(string(runtimeYAML), "\n---\n") {
		var cm struct {
			Kind     string `json:"kind"`
			Metadata struct {
				Name string `json:"name"`
			} `json:"metadata"`
			Data map[string]string `json:"data"`
		}
		if err := yaml.Unmarshal([]byte(doc), &cm); err != nil {
			t.Fatal(err)
		}
		if cm.Kind != "ConfigMap" || !strings.HasPrefix(cm.Metadata.Name, "knc-routes-") {
			continue
		}
		for key, data := range cm.Data {
			if len(data) > 1<<20 {
				t.Errorf("ConfigMap %s holds %d bytes, more than 1 MiB", cm.Metadata.Name, len(data))
			}
			if err := os.WriteFile(filepath.Join(parts, key), []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			files++
		}
	}
	if files < 2 {
		t.Fatalf("the routing table of %d Triggers is in %d ConfigMap, want it split", triggers, files)
	}
	table, _, err := routing.Read(parts)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(table.Brokers[0].Triggers); n != triggers {
		t.Fatalf("the parts hold %d Triggers, want %d", n, triggers)
	}

	k := &knc{rig.NewKncServing(t, kncBinary, parts, debugLogging...)}
	start = time.Now()
	k.Start()
	t.Logf("knc run ready with %d Triggers from %d files in %s; RSS %d MiB", triggers, files, time.Since(start).Round(time.Millisecond), rssKiB(t, k.Pid())>>10)

	for _, i := range []int{0, triggers / 2, triggers - 1} {
		mustSend(t, k.brokerURL("b"), event{id: "e" + strconv.Itoa(i), typ: "com.example.t" + strconv.Itoa(i)})
	}
	for _, i := range []int{0, triggers / 2, triggers - 1} {
		sub.waitFor(t, "/t/"+strconv.Itoa(i), 1)
	}
	// Each event is routed whole before its deliveries are sent: by now
	// every delivery it made is stored, and counted.
	if n := metric(t, k.URL(), "knc_deliveries_accepted_total", nil); n != 3 {
		t.Errorf("%v deliveries stored for 3 events that match one Trigger each", n)
	}
}

// rssKiB is the resident set size of process pid, in KiB.
func rssKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")))
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatal("no VmRSS in /proc status")
	return 0
}
