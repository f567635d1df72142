package faults

import (
	"os"
	"testing"

	"github.com/knc-dev/knc/test/rig"
)

// kncBinary is the knc built once for the package.
var kncBinary string

func TestMain(m *testing.M) {
	os.Exit(rig.MainWithKnc(m, &kncBinary))
}
