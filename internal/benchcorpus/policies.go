package benchcorpus

import (
	"os"
	"path/filepath"
)

// Policies are five policies of the kinds a platform team writes, which
// every object of a corpus satisfies: the benchmark measures checking,
// not reporting.
const Policies = `policy: "retry-bound": {
	match: kind: ["Broker", "Trigger", "Channel", "Subscription"]
	constrain: spec?: delivery?: retry?: <=10
	message: "retries are at most 10"
}
policy: "broker-dead-letter": {
	match: kind: "Broker"
	constrain: spec: delivery: deadLetterSink!: _
	message: "every Broker has a dead-letter sink"
}
policy: "trigger-app-label": {
	match: {kind: "Trigger", namespace: "team-*"}
	constrain: metadata: labels: app!: =~"^[a-z][a-z0-9-]*$"
	message: "every Trigger names its app in the label app"
}
policy: "subscriber-is-service": {
	match: kind: ["Trigger", "Subscription"]
	constrain: spec: subscriber: ref?: {apiVersion: "v1", kind: "Service"}
	severity: "warning"
	message: "subscribers are Services of the cluster"
}
policy: "dns-names": {
	constrain: metadata: name: =~"^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$"
	message: "names are DNS labels"
}
`

// WritePolicies writes Policies into dir/corpus.cue.
func WritePolicies(dir string) error {
	return os.WriteFile(filepath.Join(dir, "corpus.cue"), []byte(Policies), 0o644)
}
