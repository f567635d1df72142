package cluster

import (
	"fmt"
	"testing"

	"github.com/knc-dev/knc/internal/knative"
)

func BenchmarkSpecHash(b *testing.B) {
	spec := parseSpec(b, `{"broker":"default","filters":[{"exact":{"type":"com.example.order.created"}},{"cesql":"INT(amount) > 1000"}],
		"subscriber":{"ref":{"apiVersion":"v1","kind":"Service","name":"orders","namespace":"shop"},"uri":"/review"},
		"delivery":{"retry":5,"backoffPolicy":"linear","backoffDelay":"PT1S"}}`)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := SpecHash("Trigger", spec); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPlan1000Triggers measures one status pass's computation (not
// its writes) for a Broker with a thousand Triggers.
func BenchmarkPlan1000Triggers(b *testing.B) {
	table := testTable(b)
	live := liveSet{{knative.KindBroker, ns, "default"}: liveObject(b, "Broker", "default", 1, brokerSpec, nil)}
	base := table.Brokers[0].Triggers[0]
	table.Brokers[0].Triggers = nil
	for i := range 1000 {
		tr := base
		tr.Name = fmt.Sprintf("t%04d", i)
		table.Brokers[0].Triggers = append(table.Brokers[0].Triggers, tr)
		live[liveKey{knative.KindTrigger, ns, tr.Name}] = liveObject(b, "Trigger", tr.Name, 1, triggerSpec, nil)
	}
	computed := computeFor(table)
	own := map[string]bool{ns: true}
	b.ReportAllocs()
	for b.Loop() {
		if got := plan(planInput{table: table, computed: computed, live: live, own: own}); len(got) < 1001 {
			b.Fatalf("%d statuses", len(got))
		}
	}
}
