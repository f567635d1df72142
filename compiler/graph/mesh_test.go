package graph_test

import (
	"fmt"
	"strings"
)

// meshBrokers and meshChannels are the sources of a generated event mesh,
// as NAMESPACE/NAME, over two namespaces.
var (
	meshBrokers  = []string{"shop/orders", "shop/payments", "ops/alerts"}
	meshChannels = []string{"shop/notify", "ops/audit"}
)

// meshServices is how many Services each namespace holds; Triggers share
// them, as the Triggers of a real mesh share their subscribers.
const meshServices = 8

// mesh writes the manifests of an event mesh of the given number of
// Triggers spread over three Brokers and two Channels, with three
// Subscriptions per Channel. Every fifth Trigger has its own dead-letter
// sink, every seventh delivers to a path, and each Channel's last
// Subscription replies to a Broker: the edges a busy mesh has.
func mesh(triggers int) map[string]string {
	var b strings.Builder
	doc := func(format string, args ...any) {
		b.WriteString("---\n")
		fmt.Fprintf(&b, format, args...)
	}
	split := func(s string) (string, string) {
		ns, name, _ := strings.Cut(s, "/")
		return ns, name
	}
	for _, ns := range []string{"shop", "ops"} {
		doc("apiVersion: v1\nkind: Namespace\nmetadata: {name: %s}\n", ns)
		for i := range meshServices {
			doc("apiVersion: v1\nkind: Service\nmetadata: {name: svc-%d, namespace: %s}\n", i, ns)
		}
		doc("apiVersion: v1\nkind: Service\nmetadata: {name: dead-letters, namespace: %s}\n", ns)
	}
	for _, br := range meshBrokers {
		ns, name := split(br)
		doc("apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: %s, namespace: %s}\nspec:\n  delivery:\n    deadLetterSink: {ref: {apiVersion: v1, kind: Service, name: dead-letters}}\n", name, ns)
	}
	for i := range triggers {
		ns, broker := split(meshBrokers[i%len(meshBrokers)])
		doc("apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: t-%03d, namespace: %s}\nspec:\n  broker: %s\n  filter: {attributes: {type: com.example.event.%d}}\n", i, ns, broker, i)
		uri := ""
		if i%7 == 0 {
			uri = fmt.Sprintf(", uri: /hooks/%d", i)
		}
		fmt.Fprintf(&b, "  subscriber: {ref: {apiVersion: v1, kind: Service, name: svc-%d}%s}\n", i%meshServices, uri)
		if i%5 == 0 {
			fmt.Fprintf(&b, "  delivery:\n    deadLetterSink: {uri: \"https://dlq.example.com/%s/%d\"}\n", ns, i)
		}
	}
	for c, ch := range meshChannels {
		ns, name := split(ch)
		doc("apiVersion: messaging.knative.dev/v1\nkind: Channel\nmetadata: {name: %s, namespace: %s}\n", name, ns)
		for s := range 3 {
			doc("apiVersion: messaging.knative.dev/v1\nkind: Subscription\nmetadata: {name: %s-%d, namespace: %s}\nspec:\n  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: %s}\n  subscriber: {ref: {apiVersion: v1, kind: Service, name: svc-%d}}\n", name, s, ns, name, s)
			if s == 2 {
				_, broker := split(meshBrokers[c])
				if ns == "ops" {
					_, broker = split(meshBrokers[2])
				}
				fmt.Fprintf(&b, "  reply: {ref: {apiVersion: eventing.knative.dev/v1, kind: Broker, name: %s}}\n", broker)
			}
		}
	}
	return map[string]string{"mesh.yaml": b.String()}
}
