package runtimeconfig_test

import (
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/internal/runtimeconfig"
)

// TestEveryFieldReachesTheRuntime holds each setting to a place in
// knc.yaml and a way into the cluster's runtime, or a reason not to have
// one: a field added without them fails here.
func TestEveryFieldReachesTheRuntime(t *testing.T) {
	keys := map[string]string{}
	for _, f := range runtimeconfig.Fields {
		t.Run(f.Flag, func(t *testing.T) {
			if f.Commands == 0 || f.Type == "" || f.Usage == "" {
				t.Errorf("--%s: commands %d, type %q, usage %q; want all three", f.Flag, f.Commands, f.Type, f.Usage)
			}
			switch {
			case f.KncYAML != "" && f.WhyNotKncYAML != "":
				t.Errorf("--%s has knc.yaml field %s and a reason to have none", f.Flag, f.KncYAML)
			case f.KncYAML == "" && f.WhyNotKncYAML == "":
				t.Errorf("--%s has no knc.yaml field and no reason to have none", f.Flag)
			case f.KncYAML != "" && f.ConfigMapKey == "" && f.Rendered == "":
				t.Errorf("--%s comes from knc.yaml's %s, but nothing carries it to the cluster's runtime: give it a ConfigMap key", f.Flag, f.KncYAML)
			}
			switch {
			case f.Compile && (f.Bind != nil || f.Commands != runtimeconfig.Run):
				t.Errorf("--%s is a flag of knc run's compilation, which holds no setting of the runtime: no Bind, and knc run alone", f.Flag)
			case !f.Compile && f.Bind == nil:
				t.Errorf("--%s has no field of Config: give it a Bind", f.Flag)
			case f.Bind != nil:
				reachesConfig(t, f)
			}
			if k := f.ConfigMapKey; k != "" {
				if !strings.HasPrefix(k, "KNC_") {
					t.Errorf("ConfigMap key %s of --%s: want the prefix KNC_", k, f.Flag)
				}
				if other, ok := keys[k]; ok {
					t.Errorf("ConfigMap key %s is both --%s's and --%s's", k, other, f.Flag)
				}
				keys[k] = f.Flag
				if f.Commands&runtimeconfig.Runtime == 0 {
					t.Errorf("--%s has ConfigMap key %s, but knc runtime has no such flag", f.Flag, k)
				}
			}
		})
	}
}

// TestDocsListEveryField keeps docs/runtime-flags.md the table's page.
// KNC_UPDATE=1 writes it.
func TestDocsListEveryField(t *testing.T) {
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the package")
		}
		dir = parent
	}
	file := filepath.Join(dir, "docs", "runtime-flags.md")
	want := runtimeconfig.Markdown()
	if os.Getenv("KNC_UPDATE") == "1" {
		if err := os.WriteFile(file, []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("docs/runtime-flags.md is not the table's page; regenerate it with KNC_UPDATE=1 (-want +got):\n%s", diff)
	}
}

// bindTypes are the Go type of the field of each flag type.
var bindTypes = map[string]reflect.Type{
	"string":         reflect.TypeFor[*string](),
	"stringArray":    reflect.TypeFor[*[]string](),
	"stringSlice":    reflect.TypeFor[*[]string](),
	"bool":           reflect.TypeFor[*bool](),
	"int":            reflect.TypeFor[*int](),
	"int64":          reflect.TypeFor[*int64](),
	"float32":        reflect.TypeFor[*float32](),
	"float64":        reflect.TypeFor[*float64](),
	"duration":       reflect.TypeFor[*time.Duration](),
	"stringToString": reflect.TypeFor[*map[string]string](),
}

// samples are a value of each flag type, other than every default.
var samples = map[string]string{
	"string": "sample", "stringArray": "a", "stringSlice": "a,b", "bool": "true",
	"int": "3", "int64": "3", "float32": "0.5", "float64": "0.5",
	"duration": "3m7s", "stringToString": "k=v",
}

// reachesConfig checks that the setting of f has a field of Config of its
// type, which its default, its flag's text and, when the ConfigMap carries
// it, knc runtime's environment set, and that a flag given on the command
// line wins over the environment.
func reachesConfig(t *testing.T, f runtimeconfig.Field) {
	t.Helper()
	c := runtimeconfig.New(f.Commands)
	p := f.Bind(c)
	if want := bindTypes[f.Type]; reflect.TypeOf(p) != want {
		t.Fatalf("--%s of type %s binds a %T, want a %v", f.Flag, f.Type, p, want)
	}
	def := fmt.Sprint(reflect.ValueOf(p).Elem())
	if err := c.Set(f.Flag, samples[f.Type]); err != nil {
		t.Fatal(err)
	}
	set := fmt.Sprint(reflect.ValueOf(p).Elem())
	if set == def || !c.Given(f.Flag) {
		t.Errorf("--%s %s leaves its field at %s (given: %t)", f.Flag, samples[f.Type], def, c.Given(f.Flag))
	}
	if f.ConfigMapKey == "" {
		return
	}
	env := func(k string) (string, bool) {
		if k == f.ConfigMapKey {
			return samples[f.Type], true
		}
		return "", false
	}
	fromEnv := runtimeconfig.New(runtimeconfig.Runtime)
	if err := fromEnv.FromEnvironment(runtimeconfig.Runtime, env); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(reflect.ValueOf(f.Bind(fromEnv)).Elem()); got != set || !fromEnv.Given(f.Flag) {
		t.Errorf("$%s=%s sets --%s to %s, want %s as the flag does", f.ConfigMapKey, samples[f.Type], f.Flag, got, set)
	}
	// The command line wins over the ConfigMap.
	flagged := runtimeconfig.New(runtimeconfig.Runtime)
	flagged.MarkGiven(f.Flag)
	if err := flagged.FromEnvironment(runtimeconfig.Runtime, env); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(reflect.ValueOf(f.Bind(flagged)).Elem()); got != def {
		t.Errorf("$%s sets --%s to %s, which the command line gave", f.ConfigMapKey, f.Flag, got)
	}
	// knc run reads no ConfigMap.
	run := runtimeconfig.New(runtimeconfig.Run)
	if err := run.FromEnvironment(runtimeconfig.Run, env); err != nil {
		t.Fatal(err)
	}
	if run.Given(f.Flag) {
		t.Errorf("$%s sets --%s of knc run", f.ConfigMapKey, f.Flag)
	}
}

// TestEnvironmentFillsTheConfig: each variable of Environment sets its
// field, and a ConfigMap key that cannot be read as its flag's type is an
// error naming both.
func TestEnvironmentFillsTheConfig(t *testing.T) {
	for _, e := range runtimeconfig.Environment {
		c := runtimeconfig.New(runtimeconfig.Runtime)
		if err := c.FromEnvironment(runtimeconfig.Runtime, func(k string) (string, bool) { return "x-" + k, k == e.Name }); err != nil {
			t.Fatal(err)
		}
		if got := *e.Bind(c); got != "x-"+e.Name {
			t.Errorf("$%s sets %q, want %q", e.Name, got, "x-"+e.Name)
		}
	}
	c := runtimeconfig.New(runtimeconfig.Runtime)
	err := c.FromEnvironment(runtimeconfig.Runtime, func(k string) (string, bool) { return "many", k == runtimeconfig.Key("ttl") })
	if err == nil || !strings.Contains(err.Error(), "$KNC_TTL (of --ttl)") {
		t.Errorf("KNC_TTL=many: error %v, want one naming $KNC_TTL and --ttl", err)
	}
}
