package e2e

import (
	"os"
	"slices"
	"testing"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the whole suite.
var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(rig.MainWithKnc(m, &kncBinary))
}

// knc is one `knc run` process, with the ingress URLs of the e2e namespace.
type knc struct{ *rig.Knc }

// debugLogging makes the log a failing test prints say what each event met.
var debugLogging = []string{"--log-level", "debug"}

// startKnc serves table with a fresh data directory.
func startKnc(t *testing.T, table *routing.Table, args ...string) *knc {
	t.Helper()
	return &knc{rig.StartKnc(t, kncBinary, table, slices.Concat(debugLogging, args)...)}
}

func (k *knc) brokerURL(name string) string  { return k.BrokerURL("e2e", name) }
func (k *knc) channelURL(name string) string { return k.ChannelURL("e2e", name) }
