package faults

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/knc-dev/knc/test/rig"
)

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestDiskFullRecovers fills the filesystem of the data directory while
// events pour in. The ingress must answer 503 with Retry-After, quickly;
// /readyz and the Broker's IngressReady condition must say why. Once space
// is freed, the runtime must take events again by itself, without a
// restart, and every event answered 202 must be delivered.
func TestDiskFullRecovers(t *testing.T) {
	data := rig.SmallFilesystem(t, "32m")
	sub := rig.NewSubscriber(t)
	k := rig.NewKnc(t, kncBinary, rig.Table(rig.Broker("b",
		rig.Trigger("t", sub.URL(), rig.Retrying(100, 50*time.Millisecond, time.Second, "")))))
	k.DataDir = filepath.Join(data, "knc")
	k.Start()

	l := rig.StartLoad(rig.LoadConfig{Targets: to(k.BrokerURL(rig.Namespace, "b")), Senders: 4, Rate: 300, BodyBytes: 1 << 10})
	l.WaitAccepted(t, 100, 30*time.Second)
	// Twice: the second time the volume fills, it must be noticed and
	// recovered from as the first.
	for round := range 2 {
		filler := filepath.Join(data, "filler")
		refused := l.Codes()[http.StatusServiceUnavailable]
		rig.Fill(t, filler)
		rig.Eventually(t, 30*time.Second, "the ingress to refuse events on a full disk", func() bool {
			return l.Codes()[http.StatusServiceUnavailable] >= refused+20
		})

		code, body := get(t, k.URL()+"/readyz")
		if code != http.StatusServiceUnavailable || !strings.Contains(body, "space") {
			t.Errorf("round %d: /readyz on a full disk = %d %q, want 503 naming the lack of space", round, code, body)
		}
		_, status := get(t, k.URL()+"/status")
		if !strings.Contains(status, `"type": "IngressReady"`) || !strings.Contains(status, "StorageFull") {
			t.Errorf("round %d: /status on a full disk does not report IngressReady False with reason StorageFull:\n%s", round, status)
		}
		// A refused event is answered at once, not after the publish timeout.
		began := time.Now()
		if code := postEvent(t, k.BrokerURL(rig.Namespace, "b"), fmt.Sprint("probe-full-", round)); code != http.StatusServiceUnavailable {
			t.Errorf("round %d: an event on a full disk got %d, want 503", round, code)
		}
		took := time.Since(began)
		if took > time.Second {
			t.Errorf("round %d: an event on a full disk took %s to be refused", round, took)
		}

		if err := os.Remove(filler); err != nil {
			t.Fatal(err)
		}
		freed := time.Now()
		full := l.AcceptedCount()
		backlog := l.Accepted()
		rig.Eventually(t, 60*time.Second, "the ingress to take events again once space is back", func() bool {
			return l.AcceptedCount() > full
		})
		acceptedAgain := time.Since(freed)
		rig.Eventually(t, 60*time.Second, "the events accepted before space was freed to be delivered", func() bool {
			return rig.AllAcked(sub, backlog)
		})
		t.Logf("round %d: an event refused in %s on a full disk; after space was freed, events accepted again in %s, the %d accepted before delivered in %s",
			round, took.Round(time.Microsecond), acceptedAgain.Round(time.Millisecond), len(backlog), time.Since(freed).Round(time.Millisecond))
		rig.Eventually(t, 60*time.Second, "the ingress to take events after the recovery", func() bool {
			return l.AcceptedCount() >= full+100
		})
	}
	l.Stop()
	if code, body := get(t, k.URL()+"/readyz"); code != http.StatusOK {
		t.Errorf("/readyz after recovery = %d %q", code, body)
	}
	f := rig.Settle(60*time.Second, func() rig.Figures { return rig.Reconcile(l, []*rig.Subscriber{sub}, nil) })
	checkAccounting(t, k, "t", &f)
	f.Report(t)
	if f.Lost > 0 {
		t.Errorf("%d accepted events lost: %v", f.Lost, f.LostIDs)
	}
	t.Logf("answers: %v", l.Codes())
}
