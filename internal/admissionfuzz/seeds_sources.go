package admissionfuzz

// SourceSeeds are valid objects of the four core sources
// (sources.knative.dev/v1) and the two flows (flows.knative.dev/v1);
// together they set every field of Knative's types for them: the sink in
// each of its shapes, CloudEvent overrides, cron schedules with and
// without a time zone, data and dataBase64, ApiServerSource resources,
// owner, selector and filters, a pod template, a SinkBinding subject by
// name and by selector, Sequence steps with delivery, Parallel branches
// with filter and reply. spec.filters of an ApiServerSource needs a
// feature the default config-features leaves off, so the seeds leave it
// out and the source operator adds it. Both Knative and knc admit each of them (a test
// holds them to it).
var SourceSeeds = []Seed{
	{Name: "pingsource-full", Kind: "PingSource", YAML: `apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: tick
  namespace: team-a
  labels:
    app: shop
  annotations:
    example.com/owner: team-a
spec:
  schedule: "*/2 * * * *"
  timezone: Europe/Paris
  contentType: application/json
  data: '{"message": "hello"}'
  sink:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: default
      namespace: team-a
    uri: /ping
    CACerts: |
` + indent(caCert, "      ") + `    audience: default-broker
  ceOverrides:
    extensions:
      team: a
      tier2: backend
`},
	{Name: "pingsource-base64", Kind: "PingSource", YAML: `apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: nightly
spec:
  schedule: "@daily"
  contentType: application/json
  dataBase64: eyJhIjogMX0=
  sink:
    uri: https://sink.example.com/nightly
    CACerts: |
` + indent(caCert, "      ") + `    audience: sink.example.com
`},
	{Name: "pingsource-bare", Kind: "PingSource", YAML: `apiVersion: sources.knative.dev/v1
kind: PingSource
metadata:
  name: every-minute
spec:
  schedule: 0 9 * * MON-FRI
  contentType: text/plain
  data: plain text
  sink:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: display
`},
	{Name: "apiserversource-full", Kind: "ApiServerSource", YAML: `apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: pods
  namespace: team-a
  labels:
    app: shop
spec:
  mode: Resource
  serviceAccountName: events-sa
  resources:
  - apiVersion: v1
    kind: Pod
    selector:
      matchLabels:
        app: shop
  - apiVersion: apps/v1
    kind: Deployment
    selector:
      matchExpressions:
      - key: tier
        operator: In
        values: [backend, frontend]
  owner:
    apiVersion: apps/v1
    kind: ReplicaSet
  namespaceSelector:
    matchLabels:
      team: a
  sink:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: default
  ceOverrides:
    extensions:
      cluster: east
`},
	{Name: "apiserversource-bare", Kind: "ApiServerSource", YAML: `apiVersion: sources.knative.dev/v1
kind: ApiServerSource
metadata:
  name: events
spec:
  mode: Reference
  resources:
  - apiVersion: v1
    kind: Event
  sink:
    uri: http://sink.team-a.svc.cluster.local/
`},
	{Name: "containersource-full", Kind: "ContainerSource", YAML: `apiVersion: sources.knative.dev/v1
kind: ContainerSource
metadata:
  name: heartbeat
  namespace: team-a
spec:
  template:
    metadata:
      labels:
        app: heartbeat
    spec:
      serviceAccountName: heartbeat
      containers:
      - name: beat
        image: registry.example.com/heartbeats:1.0
        args: [--period=1]
        env:
        - name: POD_NAME
          value: heartbeat
        ports:
        - containerPort: 8080
          protocol: TCP
  sink:
    ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: display
    audience: display
  ceOverrides:
    extensions:
      origin: heartbeat
`},
	{Name: "sinkbinding-name", Kind: "SinkBinding", YAML: `apiVersion: sources.knative.dev/v1
kind: SinkBinding
metadata:
  name: bind-heartbeat
  namespace: team-a
spec:
  subject:
    apiVersion: apps/v1
    kind: Deployment
    name: heartbeat
    namespace: team-a
  sink:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: default
  ceOverrides:
    extensions:
      binding: heartbeat
`},
	{Name: "sinkbinding-selector", Kind: "SinkBinding", YAML: `apiVersion: sources.knative.dev/v1
kind: SinkBinding
metadata:
  name: bind-jobs
spec:
  subject:
    apiVersion: batch/v1
    kind: Job
    selector:
      matchLabels:
        app: batch
      matchExpressions:
      - key: tier
        operator: Exists
  sink:
    uri: https://sink.example.com/jobs
`},
	{Name: "sequence-full", Kind: "Sequence", YAML: `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata:
  name: pipeline
  namespace: team-a
  labels:
    app: shop
spec:
  channelTemplate:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
    spec:
      delivery:
        retry: 2
  steps:
  - ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: first
    uri: /step
  - uri: https://sink.example.com/second
    CACerts: |
` + indent(caCert, "      ") + `    audience: sink.example.com
    delivery:
      deadLetterSink:
        ref:
          apiVersion: serving.knative.dev/v1
          kind: Service
          name: dead-letters
      retry: 3
      backoffPolicy: exponential
      backoffDelay: PT0.5S
  - ref:
      apiVersion: serving.knative.dev/v1
      kind: Service
      name: third
      namespace: team-a
  reply:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: default
`},
	{Name: "sequence-bare", Kind: "Sequence", YAML: `apiVersion: flows.knative.dev/v1
kind: Sequence
metadata:
  name: short
spec:
  steps:
  - uri: http://only.team-a.svc.cluster.local/
`},
	{Name: "parallel-full", Kind: "Parallel", YAML: `apiVersion: flows.knative.dev/v1
kind: Parallel
metadata:
  name: fanout
  namespace: team-a
spec:
  channelTemplate:
    apiVersion: messaging.knative.dev/v1
    kind: InMemoryChannel
  branches:
  - filter:
      ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: even-filter
    subscriber:
      ref:
        apiVersion: serving.knative.dev/v1
        kind: Service
        name: even
    reply:
      uri: https://sink.example.com/even
    delivery:
      retry: 2
      backoffPolicy: linear
  - subscriber:
      uri: https://sink.example.com/odd
      CACerts: |
` + indent(caCert, "        ") + `      audience: sink.example.com
  reply:
    ref:
      apiVersion: eventing.knative.dev/v1
      kind: Broker
      name: default
`},
	{Name: "parallel-bare", Kind: "Parallel", YAML: `apiVersion: flows.knative.dev/v1
kind: Parallel
metadata:
  name: one-branch
spec:
  branches:
  - subscriber:
      uri: http://only.team-a.svc.cluster.local/
`},
}
