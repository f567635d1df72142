package conformance

import (
	"os"
	"testing"

	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the whole suite.
var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(rig.MainWithKnc(m, &kncBinary))
}
