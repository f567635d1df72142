package cli

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/plugins"
	"github.com/knc-dev/knc/runtime/command"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ui"
)

// TestRenderedRuntimeArgsParse renders the runtime of each workload form
// and checks that its container's arguments, with the $(VAR) references
// the kubelet expands, are flags knc runtime accepts and give the engine
// the intended options.
func TestRenderedRuntimeArgsParse(t *testing.T) {
	three, two, ttl, recent := int64(3), int64(2), int64(7), int64(20)
	tests := []struct {
		name    string
		runtime *project.Runtime
		check   func(t *testing.T, o engine.Options)
	}{
		{"single", nil, func(t *testing.T, o engine.Options) {
			if o.Cluster != nil || o.NATS.URL != "" || o.StreamReplicas != 1 {
				t.Errorf("cluster %+v, NATS %q, replicas %d; want the embedded server alone", o.Cluster, o.NATS.URL, o.StreamReplicas)
			}
		}},
		{"statefulset", &project.Runtime{Replicas: &three, Durability: "fsync"}, func(t *testing.T, o engine.Options) {
			if o.Cluster == nil || o.Cluster.ServerName != "knc-runtime-1" || len(o.Cluster.Routes) != 3 || o.StreamReplicas != 3 || o.Durability != engine.DurabilityFsync {
				t.Errorf("cluster %+v, replicas %d, durability %q; want node knc-runtime-1 of 3 with R3 and fsync", o.Cluster, o.StreamReplicas, o.Durability)
			}
		}},
		{"external", &project.Runtime{Replicas: &two, NATS: &project.NATSRuntime{URL: "nats://nats:4222"}}, func(t *testing.T, o engine.Options) {
			if o.NATS.URL != "nats://nats:4222" || o.Cluster != nil || o.StreamReplicas != 3 {
				t.Errorf("NATS %q, cluster %+v, replicas %d", o.NATS.URL, o.Cluster, o.StreamReplicas)
			}
		}},
		{"defaults", nil, func(t *testing.T, o engine.Options) {
			if o.DefaultTTL != engine.DefaultTTL || o.Durability != engine.DurabilityFile {
				t.Errorf("TTL %d, durability %q; want %d and file", o.DefaultTTL, o.Durability, engine.DefaultTTL)
			}
			if o.KeptMaxBytes != engine.DefaultKeptMaxBytes || o.KeptMaxAge != engine.DefaultKeptMaxAge {
				t.Errorf("kept letters bounded by %d bytes and %s; want the defaults", o.KeptMaxBytes, o.KeptMaxAge)
			}
			if o.UI == nil || o.Matched != nil {
				t.Errorf("UI %v, Matched %v; want the page, keeping no events", o.UI, o.Matched)
			}
		}},
		{"recent events of knc.yaml", &project.Runtime{UI: &project.RuntimeUI{RecentEvents: &recent}}, func(t *testing.T, o engine.Options) {
			r, ok := o.Matched.(*ui.Recent)
			if !ok || r.Size() != 20 {
				t.Errorf("Matched = %#v; want a ui.Recent of 20 events a route", o.Matched)
			}
		}},
		{"kept letters of knc.yaml", &project.Runtime{KeptLetters: &project.KeptLetters{MaxSize: "64Mi", MaxAge: "36h"}}, func(t *testing.T, o engine.Options) {
			if o.KeptMaxBytes != 64<<20 || o.KeptMaxAge != 36*time.Hour {
				t.Errorf("kept letters bounded by %d bytes and %s; want 64 MiB and 36h", o.KeptMaxBytes, o.KeptMaxAge)
			}
		}},
		{"ttl and durability of knc.yaml", &project.Runtime{TTL: &ttl, Durability: "fsync"}, func(t *testing.T, o engine.Options) {
			if o.DefaultTTL != 7 || o.Durability != engine.DurabilityFsync {
				t.Errorf("TTL %d, durability %q; want 7 and fsync", o.DefaultTTL, o.Durability)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := project.Default()
			cfg.Runtime = tt.runtime
			cfg.ClusterDomain = "corp.example"
			table := &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: []routing.Broker{{
				Source: routing.Source{Namespace: "shop", Name: "default"}, Path: routing.BrokerPath("shop", "default"),
			}}}
			objs, err := plugins.NewKnc(plugins.KncOptions{Image: "img"}).Render(&plugins.Request{Namespace: "shop", Table: table, Config: cfg})
			if err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"POD_NAME": "knc-runtime-1", "POD_NAMESPACE": "shop"}
			var args []string
			for _, o := range objs {
				b, _ := json.Marshal(o)
				switch o["kind"] {
				case "ConfigMap":
					var cm corev1.ConfigMap
					_ = json.Unmarshal(b, &cm)
					if strings.HasPrefix(cm.Name, plugins.JetStreamPrefix) {
						for k, v := range cm.Data {
							env[k] = v
						}
					}
				case "Deployment", "StatefulSet":
					var w struct {
						Spec struct{ Template corev1.PodTemplateSpec } `json:"spec"`
					}
					_ = json.Unmarshal(b, &w)
					args = w.Spec.Template.Spec.Containers[0].Args
				}
			}
			ref := regexp.MustCompile(`\$\(([A-Z_]+)\)`)
			read := map[string]bool{}
			// fromArgs are the arguments as the kubelet expands them;
			// fromEnv, the same without the flags whose value is a
			// ConfigMap key, which the runtime then reads from its
			// environment.
			var fromArgs, fromEnv []string
			for i := 0; i < len(args); i++ {
				a := args[i]
				if i+1 < len(args) && ref.MatchString(args[i+1]) && strings.HasPrefix(a, "--") {
					fromArgs = append(fromArgs, a)
					continue
				}
				if ref.MatchString(a) {
					fromArgs = append(fromArgs, ref.ReplaceAllStringFunc(a, func(m string) string {
						name := ref.FindStringSubmatch(m)[1]
						read[name] = true
						v, ok := env[name]
						if !ok {
							t.Errorf("argument %q refers to an undefined variable", a)
						}
						return v
					}))
					continue
				}
				fromArgs = append(fromArgs, a)
				fromEnv = append(fromEnv, a)
			}
			// A setting written to the ConfigMap but passed to no flag
			// never reaches the runtime through its arguments.
			for k := range env {
				if strings.HasPrefix(k, "KNC_") && !read[k] {
					t.Errorf("the ConfigMap sets %s, which no argument of knc-runtime reads", k)
				}
			}
			if len(args) == 0 || !strings.HasPrefix(args[0], "--") {
				t.Fatalf("args = %v, want the flags of knc-runtime", args)
			}
			for _, way := range []struct {
				name string
				args []string
			}{{"arguments", fromArgs}, {"environment", fromEnv}} {
				t.Run(way.name, func(t *testing.T) {
					c := runtimeconfig.New(runtimeconfig.Runtime)
					fs := pflag.NewFlagSet("knc-runtime", pflag.ContinueOnError)
					command.RegisterFlags(fs, runtimeconfig.Runtime, c)
					if err := fs.Parse(way.args); err != nil {
						t.Fatalf("knc-runtime refuses the rendered arguments %v: %v", way.args, err)
					}
					command.MarkGiven(fs, c)
					if err := c.FromEnvironment(runtimeconfig.Runtime, func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
						t.Fatal(err)
					}
					// clusterDomain of knc.yaml completes the addresses of
					// v1 Services the cluster's runtime resolves.
					if c.ClusterDomain != cfg.ClusterDomain || !c.Given("cluster-domain") {
						t.Errorf("--cluster-domain = %q, want knc.yaml's %q", c.ClusterDomain, cfg.ClusterDomain)
					}
					var o engine.Options
					if err := command.Apply(&o, c); err != nil {
						t.Fatal(err)
					}
					if err := command.ServeUI(&o, c, func() *engine.Engine { return nil }, nil, nil); err != nil {
						t.Fatal(err)
					}
					tt.check(t, o)
				})
			}
		})
	}
}
