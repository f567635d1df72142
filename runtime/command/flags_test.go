package command

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"

	"github.com/knc-dev/knc/internal/runtimeconfig"
	"github.com/knc-dev/knc/runtime/cluster"
	"github.com/knc-dev/knc/runtime/engine"
	"github.com/knc-dev/knc/runtime/ingress"
)

// TestFlagsFillTheConfig: each flag RegisterFlags gives a command sets
// the field of runtimeconfig.Config its row binds, as Config.Set (which
// the environment goes through) reads the same text.
func TestFlagsFillTheConfig(t *testing.T) {
	samples := map[string]string{
		"string": "sample", "stringArray": "a", "stringSlice": "a,b", "bool": "true",
		"int": "3", "int64": "3", "float32": "0.5", "float64": "0.5",
		"duration": "3m7s", "stringToString": "k=v",
	}
	for _, cmd := range []runtimeconfig.Command{runtimeconfig.Run, runtimeconfig.Runtime} {
		for _, f := range runtimeconfig.Fields {
			if f.Bind == nil || f.Commands&cmd == 0 {
				continue
			}
			fromFlag := runtimeconfig.New(cmd)
			fs := pflag.NewFlagSet("test", pflag.ContinueOnError)
			RegisterFlags(fs, cmd, fromFlag)
			if err := fs.Parse([]string{"--" + f.Flag + "=" + samples[f.Type]}); err != nil {
				t.Fatalf("--%s: %v", f.Flag, err)
			}
			MarkGiven(fs, fromFlag)
			fromText := runtimeconfig.New(cmd)
			if err := fromText.Set(f.Flag, samples[f.Type]); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(fromText, fromFlag, cmp.AllowUnexported(runtimeconfig.Config{})); diff != "" {
				t.Errorf("command %d, --%s=%s (-Set +flag):\n%s", cmd, f.Flag, samples[f.Type], diff)
			}
		}
	}
}

// TestDefaultsAreTheRuntimes: the defaults of the table, which the flags
// take, are those the runtime's packages fall back to themselves.
func TestDefaultsAreTheRuntimes(t *testing.T) {
	c := runtimeconfig.New(runtimeconfig.Runtime)
	got := []any{c.HTTPAddr, c.AckWait, c.MaxBodyBytes, c.ShutdownTimeout,
		c.MaxHeaderBytes, c.ReadHeaderTimeout, c.ReadTimeout, c.WriteTimeout, c.IdleTimeout, c.MaxConcurrentRequests,
		c.TablePollInterval, c.Resync, c.ClusterDomain, c.KubeAPIQPS, c.KubeAPIBurst}
	want := []any{engine.DefaultHTTPAddr, engine.DefaultAckWait, int64(engine.DefaultMaxBodyBytes), engine.DefaultShutdownTimeout,
		ingress.DefaultMaxHeaderBytes, ingress.DefaultReadHeaderTimeout, ingress.DefaultReadTimeout, ingress.DefaultWriteTimeout, ingress.DefaultIdleTimeout, ingress.DefaultMaxConcurrentRequests,
		cluster.DefaultTablePollInterval, cluster.DefaultResync, cluster.DefaultClusterDomain, float32(cluster.DefaultKubeAPIQPS), int(cluster.DefaultKubeAPIBurst)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the table's defaults (+) are not the runtime's (-):\n%s", diff)
	}
}
