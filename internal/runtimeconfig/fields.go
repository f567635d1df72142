// Package runtimeconfig describes, once, every setting of knc's runtime:
// the flag of knc run and knc runtime that sets it, the key of the
// ConfigMap knc build renders that carries it to the cluster's runtime,
// and the field of knc.yaml it comes from, or why it has none. The help of
// both commands, the ConfigMap's keys and docs/runtime-flags.md are held
// to this table by tests.
//
// The runtime's own binary uses this package, so it imports the standard
// library alone: no CUE, kustomize or compiler.
package runtimeconfig

import (
	"slices"
	"strings"
)

// Command is a set of the commands that take a flag.
type Command int

// The commands that serve the runtime.
const (
	Run Command = 1 << iota
	Runtime
)

// Why a setting has no field in knc.yaml.
const (
	whyPod    = "fixed by the workload knc build renders: a path, port or format of its container"
	whyLocal  = "concerns knc on a workstation: compiling, or reaching the cluster from outside"
	whySecret = "names files of a mounted Secret, which knc.yaml must not hold"
	whyTuning = "an operational bound whose default suits the runtime; change it with a patch of the workload's args"
)

// Field is one setting of the runtime.
type Field struct {
	// Flag is the flag's name, without dashes.
	Flag string
	// Commands take the flag.
	Commands Command
	// Type is the flag's pflag type.
	Type string
	// Default is the flag's default as its help prints it; RuntimeDefault
	// is knc runtime's, when it differs.
	Default, RuntimeDefault string
	// Usage is the flag's help; RuntimeUsage is knc runtime's, when it
	// differs.
	Usage, RuntimeUsage string
	// ConfigMapKey is the key of the runtime's ConfigMap that carries the
	// setting, read by the flag through $(KEY) in the container's args.
	ConfigMapKey string
	// Rendered says how knc build passes the setting when not through the
	// ConfigMap.
	Rendered string
	// KncYAML is the field of knc.yaml the setting comes from;
	// WhyNotKncYAML says why there is none.
	KncYAML, WhyNotKncYAML string
	// Bind returns the field of c that holds the setting: a *string,
	// *[]string, *bool, *int, *int64, *float32, *float64,
	// *time.Duration or *map[string]string, as Type says.
	Bind func(c *Config) any
	// Compile marks a flag of knc run's compilation of manifests, which
	// knc validate and knc build share: it is registered with them, and
	// holds no setting of the runtime, so it has no Bind.
	Compile bool
}

// DefaultFor is the flag's default in cmd.
func (f Field) DefaultFor(cmd Command) string {
	if cmd == Runtime && f.RuntimeDefault != "" {
		return f.RuntimeDefault
	}
	return f.Default
}

// UsageFor is the flag's help in cmd.
func (f Field) UsageFor(cmd Command) string {
	if cmd == Runtime && f.RuntimeUsage != "" {
		return f.RuntimeUsage
	}
	return f.Usage
}

// Lookup returns the field of a flag.
func Lookup(flag string) (Field, bool) {
	i := slices.IndexFunc(Fields, func(f Field) bool { return f.Flag == flag })
	if i < 0 {
		return Field{}, false
	}
	return Fields[i], true
}

// Key returns the ConfigMap key of a flag, and panics for a flag that has
// none: a programming error the tests catch.
func Key(flag string) string {
	f, ok := Lookup(flag)
	if !ok || f.ConfigMapKey == "" {
		panic("runtimeconfig: no ConfigMap key for --" + flag)
	}
	return f.ConfigMapKey
}

// Ref is $(KEY), how the container's args read the ConfigMap key of flag.
func Ref(flag string) string { return "$(" + Key(flag) + ")" }

// Markdown is docs/runtime-flags.md: the table as a page.
func Markdown() string {
	var b strings.Builder
	b.WriteString("# The runtime's settings\n\n")
	b.WriteString("<!-- Generated from internal/runtimeconfig; regenerate with KNC_UPDATE=1 go test ./internal/runtimeconfig. -->\n\n")
	b.WriteString("Every flag of `knc run` and `knc runtime`, the key of the ConfigMap `knc build`\n")
	b.WriteString("renders that carries it to a cluster's runtime, and the field of knc.yaml it\n")
	b.WriteString("comes from, or why it has none.\n\n")
	b.WriteString("| Flag | Commands | Default | Description | knc.yaml | In the cluster |\n")
	b.WriteString("|---|---|---|---|---|---|\n")
	cell := func(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
	for _, f := range Fields {
		var cmds []string
		if f.Commands&Run != 0 {
			cmds = append(cmds, "run")
		}
		if f.Commands&Runtime != 0 {
			cmds = append(cmds, "runtime")
		}
		def := "`" + f.Default + "`"
		if f.RuntimeDefault != "" {
			def += " (runtime: `" + f.RuntimeDefault + "`)"
		}
		yaml := "—: " + f.WhyNotKncYAML
		if f.KncYAML != "" {
			yaml = "`" + f.KncYAML + "`"
		}
		cluster := f.Rendered
		if f.ConfigMapKey != "" {
			cluster = "ConfigMap key `" + f.ConfigMapKey + "`"
		}
		b.WriteString("| `--" + f.Flag + "` | " + strings.Join(cmds, ", ") + " | " + cell(def) + " | " + cell(strings.ReplaceAll(f.UsageFor(Run), "`", "")) + " | " + cell(yaml) + " | " + cell(cluster) + " |\n")
	}
	b.WriteString("\n## The environment\n\n")
	b.WriteString("`knc runtime` (and `knc-runtime`, the command of the runtime's image) reads\n")
	b.WriteString("each ConfigMap key above from its environment, where the Deployment puts the\n")
	b.WriteString("ConfigMap, for a flag not given on the command line. Both commands also read:\n\n")
	b.WriteString("| Variable | Sets |\n|---|---|\n")
	for _, e := range Environment {
		b.WriteString("| `" + e.Name + "` | " + cell(e.Usage) + " |\n")
	}
	return b.String()
}

// Fields are the runtime's settings, by flag name.
var Fields = []Field{
	{Flag: "ack-wait", Commands: Run | Runtime, Type: "duration", Default: "15s",
		Bind:          func(c *Config) any { return &c.AckWait },
		Usage:         "how long a delivery stays claimed; after a crash, undelivered events wait this long",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "address", Commands: Run, Type: "stringArray", Default: "[]",
		Compile:       true,
		Usage:         "resolve a reference to a local URL: `KIND/NAMESPACE/NAME=URL` or KIND/NAME=URL in the default namespace (repeatable)",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "admin-addr", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:           func(c *Config) any { return &c.AdminAddr },
		Usage:          "serve /status, /metrics and the probes on their own listener at `HOST:PORT` instead of --http-addr",
		WhyNotKncYAML:  whyPod,
		RuntimeDefault: "127.0.0.1:9090",
		RuntimeUsage:   "listen address `HOST:PORT` of /status, /metrics, /ui and the probes (port 0 picks a free one)",
	},
	{Flag: "bearer-tokens", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.BearerTokens },
		Usage:         "`DIR` of token files named broker.NAMESPACE.NAME or channel.NAMESPACE.NAME (a mounted Secret); those ingresses require 'Authorization: Bearer TOKEN' (one token a line); the file admin authorises knc dlq on the admin listener",
		WhyNotKncYAML: whySecret,
	},
	{Flag: "bearer-tokens-reload-interval", Commands: Run | Runtime, Type: "duration", Default: "10s",
		Bind:          func(c *Config) any { return &c.BearerTokensReloadInterval },
		Usage:         "how often the --bearer-tokens directory is read again, so that added, changed and revoked tokens apply",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "cluster-addr", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.ClusterAddr },
		Usage:        "`HOST:PORT` the other nodes of the cluster connect to",
		ConfigMapKey: "", Rendered: "the StatefulSet's args",
		KncYAML: "runtime.replicas",
	},
	{Flag: "cluster-domain", Commands: Runtime, Type: "string", Default: "cluster.local",
		Bind:         func(c *Config) any { return &c.ClusterDomain },
		Usage:        "DNS domain of the cluster's Services, for references to v1 Services",
		ConfigMapKey: "KNC_CLUSTER_DOMAIN",
		KncYAML:      "clusterDomain",
	},
	{Flag: "cluster-name", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.ClusterName },
		Usage:        "make the embedded server a node of the JetStream cluster `NAME` (with --cluster-addr and --cluster-routes)",
		ConfigMapKey: "", Rendered: "the StatefulSet's args",
		KncYAML: "runtime.replicas",
	},
	{Flag: "cluster-routes", Commands: Run | Runtime, Type: "stringSlice", Default: "[]",
		Bind:         func(c *Config) any { return &c.ClusterRoutes },
		Usage:        "`URL`s of the cluster's nodes, nats-route://HOST:PORT (repeat or separate with commas)",
		ConfigMapKey: "", Rendered: "the StatefulSet's args",
		KncYAML: "runtime.replicas",
	},
	{Flag: "config", Commands: Run, Type: "string", Default: "",
		Compile:       true,
		Usage:         "project config file (default: knc.yaml in the first path or a parent, up to the top of the git work tree)",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "context", Commands: Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.KubeContext },
		Usage:         "kubeconfig `CONTEXT` to use (default: the current context)",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "cue-memory", Commands: Run, Type: "string", Default: "2Gi",
		Compile:       true,
		Usage:         "stop a CUE evaluation when it grows memory by this `QUANTITY` (such as 512Mi), as an error",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "cue-timeout", Commands: Run, Type: "duration", Default: "30s",
		Compile:       true,
		Usage:         "stop a CUE evaluation (a .cue manifest, a plugin, the policies) after this `DURATION`, as an error",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "data-dir", Commands: Run | Runtime, Type: "string", Default: ".knc-data",
		Bind:          func(c *Config) any { return &c.DataDir },
		Usage:         "`DIR` for the JetStream store; reuse it to keep undelivered events across restarts",
		WhyNotKncYAML: whyPod,
		RuntimeUsage:  "`DIR` for the JetStream store",
	},
	{Flag: "durability", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.Durability },
		Usage:        "when an event is stored: file (written to the store's files, flushed to disk within two minutes) or fsync (fsynced before 202); default file, or runtime.durability of knc.yaml",
		ConfigMapKey: "KNC_DURABILITY",
		KncYAML:      "runtime.durability",
	},
	{Flag: "exclude", Commands: Run, Type: "stringArray", Default: "[]",
		Compile:       true,
		Usage:         "skip files and directories matching this path.Match `pattern`, relative to the current directory (repeatable)",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "fsync", Commands: Run | Runtime, Type: "bool", Default: "false",
		Bind:         func(c *Config) any { return &c.Fsync },
		Usage:        "fsync every event to disk before answering 202 (embedded server); the same as --durability fsync",
		ConfigMapKey: "", Rendered: "runtime.durability, through KNC_DURABILITY",
		KncYAML: "runtime.durability",
	},
	{Flag: "http-addr", Commands: Run | Runtime, Type: "string", Default: "127.0.0.1:8080",
		Bind:          func(c *Config) any { return &c.HTTPAddr },
		Usage:         "HTTP listen address `HOST:PORT` (port 0 picks a free one)",
		WhyNotKncYAML: whyPod,
	},
	{Flag: "idle-timeout", Commands: Run | Runtime, Type: "duration", Default: "2m0s",
		Bind:          func(c *Config) any { return &c.IdleTimeout },
		Usage:         "how long an idle keep-alive connection stays open",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "ingress-shards", Commands: Run | Runtime, Type: "int", Default: "0",
		Bind:          func(c *Config) any { return &c.IngressShards },
		Usage:         "ingress streams per Broker and Channel, stored and routed in parallel, with no ordering across them (default 1)",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "kept-max-age", Commands: Run | Runtime, Type: "duration", Default: "168h0m0s",
		Bind:         func(c *Config) any { return &c.KeptMaxAge },
		Usage:        "how long the deliveries that failed are kept, per namespace, to be seen and replayed with knc dlq; older ones are removed and counted; runtime.keptLetters.maxAge of knc.yaml sets it too",
		ConfigMapKey: "KNC_KEPT_MAX_AGE",
		KncYAML:      "runtime.keptLetters.maxAge",
	},
	{Flag: "kept-max-bytes", Commands: Run | Runtime, Type: "int64", Default: "1073741824",
		Bind:         func(c *Config) any { return &c.KeptMaxBytes },
		Usage:        "bytes of failed deliveries kept per namespace for knc dlq; the oldest are evicted, and counted, to make room (at most a quarter of --max-store-bytes); runtime.keptLetters.maxSize of knc.yaml sets it too",
		ConfigMapKey: "KNC_KEPT_MAX_BYTES",
		KncYAML:      "runtime.keptLetters.maxSize",
	},
	{Flag: "kube-api-burst", Commands: Runtime, Type: "int", Default: "300",
		Bind:          func(c *Config) any { return &c.KubeAPIBurst },
		Usage:         "requests to the API server in a burst",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "kube-api-qps", Commands: Runtime, Type: "float32", Default: "100",
		Bind:          func(c *Config) any { return &c.KubeAPIQPS },
		Usage:         "requests per second to the API server, on average",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "kubeconfig", Commands: Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.Kubeconfig },
		Usage:         "kubeconfig `FILE` (default: in a pod the in-cluster configuration, else $KUBECONFIG or ~/.kube/config)",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "log-format", Commands: Run | Runtime, Type: "string", Default: "text",
		Bind:          func(c *Config) any { return &c.LogFormat },
		Usage:         "log format: text or json",
		WhyNotKncYAML: whyPod,
	},
	{Flag: "log-level", Commands: Run | Runtime, Type: "string", Default: "info",
		Bind:          func(c *Config) any { return &c.LogLevel },
		Usage:         "log level: debug, info, warn or error",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "max-alias-bytes", Commands: Run, Type: "string", Default: "64Mi",
		Compile:       true,
		Usage:         "refuse YAML whose aliases add more than this `QUANTITY` (such as 16Mi) to all documents read together",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "max-body-bytes", Commands: Run | Runtime, Type: "int64", Default: "4194304",
		Bind:         func(c *Config) any { return &c.MaxBodyBytes },
		Usage:        "largest event body accepted; larger ones get 413",
		ConfigMapKey: "KNC_MAX_BODY_BYTES",
		KncYAML:      "runtime.maxEventBytes",
	},
	{Flag: "max-concurrent-requests", Commands: Run | Runtime, Type: "int", Default: "1024",
		Bind:          func(c *Config) any { return &c.MaxConcurrentRequests },
		Usage:         "ingress requests served at once; more get 429 with Retry-After",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "max-header-bytes", Commands: Run | Runtime, Type: "int", Default: "65536",
		Bind:          func(c *Config) any { return &c.MaxHeaderBytes },
		Usage:         "largest request headers accepted; larger ones get 431",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "max-input-bytes", Commands: Run, Type: "string", Default: "1Gi",
		Compile:       true,
		Usage:         "refuse to read more than this `QUANTITY` (such as 512Mi or 2Gi) from all files and standard input together",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "max-store-bytes", Commands: Run | Runtime, Type: "int64", Default: "0",
		Bind:         func(c *Config) any { return &c.MaxStoreBytes },
		Usage:        "cap on JetStream file storage; when full, ingresses answer 503 (0: NATS's default)",
		ConfigMapKey: "KNC_MAX_STORE_BYTES",
		KncYAML:      "runtime.storage.size",
	},
	{Flag: "namespace", Commands: Runtime, Type: "stringSlice", Default: "[]",
		Bind:          func(c *Config) any { return &c.Namespaces },
		Usage:         "`NAMESPACE` the runtime serves; repeat or separate with commas (default: $POD_NAMESPACE)",
		WhyNotKncYAML: whyPod,
	},
	{Flag: "nats-addr", Commands: Run, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.NATSAddr },
		Usage:         "also serve NATS clients at `HOST:PORT`, to inspect the streams (default: no port)",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "nats-ca", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.NATSCA },
		Usage:         "PEM `FILE` of the CA that signed the NATS servers' certificates",
		WhyNotKncYAML: whySecret,
	},
	{Flag: "nats-creds", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.NATSCreds },
		Usage:         "NATS credentials `FILE` for --nats-url",
		WhyNotKncYAML: whySecret,
	},
	{Flag: "nats-secret-dir", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.NATSSecretDir },
		Usage:        "`DIR` of a mounted Secret whose keys nats.creds, user, password, token and ca.crt, those present, authenticate to --nats-url",
		ConfigMapKey: "", Rendered: "the Deployment's args: the mount of runtime.nats.credentialsSecret",
		KncYAML: "runtime.nats.credentialsSecret",
	},
	{Flag: "nats-url", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.NATSURL },
		Usage:        "use the NATS cluster at `URL` (nats:// or tls://, several separated by commas) instead of the embedded server; $KNC_NATS_USER, $KNC_NATS_PASSWORD and $KNC_NATS_TOKEN authenticate",
		ConfigMapKey: "", Rendered: "the Deployment's args, from runtime.nats.url",
		KncYAML: "runtime.nats.url",
	},
	{Flag: "read-header-timeout", Commands: Run | Runtime, Type: "duration", Default: "10s",
		Bind:          func(c *Config) any { return &c.ReadHeaderTimeout },
		Usage:         "time a client has to send its request headers",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "read-timeout", Commands: Run | Runtime, Type: "duration", Default: "1m0s",
		Bind:          func(c *Config) any { return &c.ReadTimeout },
		Usage:         "time a client has to send a whole request; a slower body gets 408",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "resync", Commands: Runtime, Type: "duration", Default: "5m0s",
		Bind:          func(c *Config) any { return &c.Resync },
		Usage:         "how often every reference and status is checked again regardless of watches",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "server-name", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.ServerName },
		Usage:        "unique, stable name of this node in the cluster (default: $POD_NAME, else the host name)",
		ConfigMapKey: "", Rendered: "the StatefulSet's args, from the pod's name",
		KncYAML: "runtime.replicas",
	},
	{Flag: "services-url", Commands: Run, Type: "string", Default: "",
		Compile:       true,
		Usage:         "resolve every v1 Service not named by --address to this `URL`, such as a local 'knc display'",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "shutdown-timeout", Commands: Run | Runtime, Type: "duration", Default: "10s",
		Bind:          func(c *Config) any { return &c.ShutdownTimeout },
		Usage:         "bound on the graceful drain at SIGTERM",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "stream-replicas", Commands: Run | Runtime, Type: "int", Default: "1",
		Bind:         func(c *Config) any { return &c.StreamReplicas },
		Usage:        "copies of each stream a JetStream cluster keeps (3 survives the loss of a node)",
		ConfigMapKey: "KNC_STREAM_REPLICAS",
		KncYAML:      "runtime.replicas",
	},
	{Flag: "strict", Commands: Run, Type: "bool", Default: "false",
		Compile:       true,
		Usage:         "treat warnings (checks stricter than Knative's admission) as errors",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "table", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:           func(c *Config) any { return &c.Table },
		Usage:          "routing table `FILE` written by knc build, or a directory of the parts of a split one",
		WhyNotKncYAML:  whyPod,
		RuntimeDefault: "/etc/knc/routing/table.json",
		RuntimeUsage:   "routing table `FILE` (the mounted ConfigMap), or the directory of the ConfigMaps of a split one",
	},
	{Flag: "table-poll-interval", Commands: Runtime, Type: "duration", Default: "2s",
		Bind:          func(c *Config) any { return &c.TablePollInterval },
		Usage:         "how often the table file is checked for a change",
		WhyNotKncYAML: whyTuning,
	},
	{Flag: "tls-cert", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.TLSCert },
		Usage:         "serve HTTPS with this PEM certificate `FILE` (with --tls-key); it is read again when it changes",
		WhyNotKncYAML: whySecret,
	},
	{Flag: "tls-key", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:          func(c *Config) any { return &c.TLSKey },
		Usage:         "PEM private key `FILE` of --tls-cert",
		WhyNotKncYAML: whySecret,
	},
	{Flag: "tracing-endpoint", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.TracingEndpoint },
		Usage:        "export OpenTelemetry spans to the OTLP receiver at `URL` (http:// or https://) or HOST:PORT (default: runtime.tracing.endpoint of knc.yaml, else $OTEL_EXPORTER_OTLP_ENDPOINT; none: no spans)",
		ConfigMapKey: "KNC_TRACING_ENDPOINT",
		KncYAML:      "runtime.tracing.endpoint",
	},
	{Flag: "tracing-header", Commands: Run | Runtime, Type: "stringToString", Default: "[]",
		Bind:         func(c *Config) any { return &c.TracingHeaders },
		Usage:        "`NAME=VALUE` header sent with each export (repeat or separate with commas)",
		ConfigMapKey: "KNC_TRACING_HEADERS",
		KncYAML:      "runtime.tracing.headers",
	},
	{Flag: "tracing-insecure", Commands: Run | Runtime, Type: "bool", Default: "false",
		Bind:         func(c *Config) any { return &c.TracingInsecure },
		Usage:        "send spans without TLS to a --tracing-endpoint given as HOST:PORT",
		ConfigMapKey: "", Rendered: "the Deployment's args, from runtime.tracing.insecure",
		KncYAML: "runtime.tracing.insecure",
	},
	{Flag: "tracing-protocol", Commands: Run | Runtime, Type: "string", Default: "",
		Bind:         func(c *Config) any { return &c.TracingProtocol },
		Usage:        "OTLP protocol: http (protobuf over HTTP) or grpc (default http, or $OTEL_EXPORTER_OTLP_PROTOCOL)",
		ConfigMapKey: "KNC_TRACING_PROTOCOL",
		KncYAML:      "runtime.tracing.protocol",
	},
	{Flag: "tracing-sampling-ratio", Commands: Run | Runtime, Type: "float64", Default: "1",
		Bind:         func(c *Config) any { return &c.TracingSamplingRatio },
		Usage:        "share of new traces sampled, 0 to 1; a request with a traceparent follows its sender's decision",
		ConfigMapKey: "KNC_TRACING_SAMPLING_RATIO",
		KncYAML:      "runtime.tracing.samplingRatio",
	},
	{Flag: "ttl", Commands: Run | Runtime, Type: "int", Default: "0",
		Bind:         func(c *Config) any { return &c.TTL },
		Usage:        "knativebrokerttl a Broker's ingress gives an event that arrives without one, 1 to 255 (default 255, or runtime.ttl of knc.yaml)",
		ConfigMapKey: "KNC_TTL",
		KncYAML:      "runtime.ttl",
	},
	{Flag: "ui-recent-events", Commands: Run | Runtime, Type: "int", Default: "0",
		Bind:         func(c *Config) any { return &c.UIRecentEvents },
		Usage:        "keep the attributes (never the data) of the last `N` events each Trigger or Subscription matched, shown by the page at /ui, at most 1000 (default 0: none, or runtime.ui.recentEvents of knc.yaml)",
		ConfigMapKey: "KNC_UI_RECENT_EVENTS",
		KncYAML:      "runtime.ui.recentEvents",
	},
	{Flag: "verbose", Commands: Run, Type: "bool", Default: "false",
		Compile:       true,
		Usage:         "list on stderr the files and directories passed over, and the deploy units found",
		WhyNotKncYAML: whyLocal,
	},
	{Flag: "write-timeout", Commands: Run | Runtime, Type: "duration", Default: "1m0s",
		Bind:          func(c *Config) any { return &c.WriteTimeout },
		Usage:         "time to write a response",
		WhyNotKncYAML: whyTuning,
	},
}
