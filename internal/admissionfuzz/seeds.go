package admissionfuzz

import "strings"

// caCert is a self-signed certificate for sink.example.com, so that the
// CACerts fields of the seeds hold what Knative parses as PEM.
const caCert = `-----BEGIN CERTIFICATE-----
MIIBjTCCATOgAwIBAgIUKJfwkX+14akOCWFzb8iPhTy/5vIwCgYIKoZIzj0EAwIw
GzEZMBcGA1UEAwwQc2luay5leGFtcGxlLmNvbTAgFw0yNjExMjcxMjIyMjdaGA8y
MTI2MTEwMzEyMjIyN1owGzEZMBcGA1UEAwwQc2luay5leGFtcGxlLmNvbTBZMBMG
ByqGSM49AgEGCCqGSM49AwEHA0IABMmexvRu09mp0JT2R2B+HwYCurSjLp02Nio8
pl1wN/Ov/jjwqeEtJRhUV5ZyBtRqnSDtn+RnEIawHkmylSv7BRejUzBRMB0GA1Ud
DgQWBBSVUMWhwIikr0EUzlR1lvJHpAB1XjAfBgNVHSMEGDAWgBSVUMWhwIikr0EU
zlR1lvJHpAB1XjAPBgNVHRMBAf8EBTADAQH/MAoGCCqGSM49BAMCA0gAMEUCICFK
fF4+ouU6d9iO1lAqYZd0b91MmjHjV3kMXPV+cUqOAiEA3Rrf/KuAMDeUtfCxMwg2
IJzL6KZOXyv0ROKPy3GfK04=
-----END CERTIFICATE-----
`

// Seed is a valid object the mutants start from.
type Seed struct {
	Name string
	Kind string
	YAML string
}

// Seeds are valid objects of the four kinds; together they set every field
// of Knative's types for them, every filter dialect and nesting included.
// Both Knative and knc admit each of them (a test holds them to it).
var Seeds = []Seed{
	{Name: "broker-full", Kind: "Broker", YAML: `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: default
  namespace: team-a
  labels:
    app.kubernetes.io/name: shop
    tier: backend
  annotations:
    eventing.knative.dev/broker.class: MTChannelBasedBroker
    example.com/owner: team-a
spec:
  config:
    apiVersion: v1
    kind: ConfigMap
    name: config-br-default-channel
    namespace: knative-eventing
  delivery:
    deadLetterSink:
      ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: dead-letters
        namespace: team-a
      uri: /dead
      CACerts: |
` + indent(caCert, "        ") + `      audience: dead-letters
    retry: 3
    backoffPolicy: exponential
    backoffDelay: PT0.2S
    timeout: PT5S
    format: json
`},
	{Name: "broker-bare", Kind: "Broker", YAML: `apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: orders
spec:
  delivery:
    deadLetterSink:
      uri: http://dead-letters.team-a.svc.cluster.local/
    retry: 0
    backoffPolicy: linear
`},
	{Name: "trigger-attributes", Kind: "Trigger", YAML: `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: orders-created
  namespace: team-a
  labels:
    app: shop
  annotations:
    knative.dev/dependency: '{"kind":"PingSource","name":"tick","apiVersion":"sources.knative.dev/v1"}'
spec:
  broker: default
  filter:
    attributes:
      type: com.example.order.created
      source: /shop
      myextension: value
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: orders
      namespace: team-a
    uri: /created
  delivery:
    deadLetterSink:
      ref:
        apiVersion: v1
        kind: Service
        name: dead-letters
    retry: 5
    backoffPolicy: exponential
    backoffDelay: PT1S
    timeout: PT10S
    format: binary
`},
	{Name: "trigger-filters", Kind: "Trigger", YAML: `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: audit
spec:
  broker: default
  filters:
  - exact:
      type: com.example.order.created
  - prefix:
      source: /shop
  - suffix:
      subject: .json
  - all:
    - exact:
        type: a
    - any:
      - prefix:
          source: /x
      - not:
          suffix:
            subject: .tmp
  - any:
    - exact:
        type: b
    - cesql: "source LIKE '%commerce%' AND type IN ('order.created', 'order.updated')"
  - not:
      exact:
        type: c
  - cesql: "EXISTS subject AND myextension = 'value'"
  subscriber:
    uri: https://sink.example.com/audit
    CACerts: |
` + indent(caCert, "      ") + `    audience: sink.example.com
`},
	{Name: "trigger-brokerref", Kind: "Trigger", YAML: `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: payments
  namespace: team-b
spec:
  brokerRef:
    apiVersion: eventing.knative.dev/v1
    kind: Broker
    name: payments
  subscriber:
    ref:
      apiVersion: messaging.knative.dev/v1
      kind: Channel
      name: payments
`},
	{Name: "channel-full", Kind: "Channel", YAML: `apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: events
  namespace: team-a
  labels:
    app: shop
  annotations:
    messaging.knative.dev/subscribable: v1
spec:
  channelTemplate:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
    spec:
      delivery:
        retry: 2
        backoffPolicy: linear
        backoffDelay: PT0.5S
  delivery:
    deadLetterSink:
      ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: dead-letters
      uri: /dead
    retry: 4
    backoffPolicy: exponential
    backoffDelay: PT2S
    timeout: PT30S
    format: json
`},
	{Name: "channel-bare", Kind: "Channel", YAML: `apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: raw
`},
	{Name: "subscription-full", Kind: "Subscription", YAML: `apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: events-to-orders
  namespace: team-a
  labels:
    app: shop
  annotations:
    example.com/owner: team-a
spec:
  channel:
    apiVersion: messaging.knative.dev/v1
    kind: Channel
    name: events
  subscriber:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: orders
      namespace: team-a
    uri: /events
    audience: orders
  reply:
    ref:
      apiVersion: messaging.knative.dev/v1
      kind: InMemoryChannel
      name: replies
  delivery:
    deadLetterSink:
      uri: https://sink.example.com/dead
      CACerts: |
` + indent(caCert, "        ") + `    retry: 3
    backoffPolicy: linear
    backoffDelay: PT0.1S
    timeout: PT1S
    format: json
`},
	{Name: "subscription-uri", Kind: "Subscription", YAML: `apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: to-uri
spec:
  channel:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
    name: events
  subscriber:
    uri: http://sink.team-a.svc.cluster.local/
  reply:
    uri: http://replies.team-a.svc.cluster.local/
`},
}

func indent(s, prefix string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		b.WriteString(prefix + line)
	}
	return b.String()
}
