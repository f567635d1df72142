package engine

import (
	"slices"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// testutilCounter sums every sample of a counter in the engine's registry.
func testutilCounter(e *Engine, name string) float64 {
	return testutilCounterWith(e, name, "", "")
}

// testutilCounterWith sums the samples of a counter whose label has value,
// every sample when label is "".
func testutilCounterWith(e *Engine, name, label, value string) float64 {
	families, err := e.opts.Registry.Gather()
	if err != nil {
		return -1
	}
	var sum float64
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if label == "" || slices.ContainsFunc(m.GetLabel(), func(l *dto.LabelPair) bool {
				return l.GetName() == label && l.GetValue() == value
			}) {
				sum += m.GetCounter().GetValue()
			}
		}
	}
	return sum
}

func TestMetricsUseOwnRegistry(t *testing.T) {
	e, err := New(Options{Table: brokerTable(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	other, err := New(Options{Table: brokerTable(), DataDir: t.TempDir()})
	if err != nil {
		t.Fatalf("a second engine in one process must not collide on metrics: %v", err)
	}
	if e.opts.Registry == other.opts.Registry {
		t.Error("two engines share a registry")
	}
}
