package schema_test

import (
	"os"
	"path/filepath"
	"testing"

	"cuelang.org/go/cue"
	"cuelang.org/go/cue/cuecontext"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/schema"
)

// TestConfigAgreesWithProjectRead holds #Config, which knc schema
// publishes, to what project.Read accepts, where the two are written
// apart. Each config is JSON, which CUE and YAML both read.
func TestConfigAgreesWithProjectRead(t *testing.T) {
	ctx := cuecontext.New()
	v, err := schema.Compile(ctx)
	if err != nil {
		t.Fatal(err)
	}
	def := v.LookupPath(cue.ParsePath("#Config"))
	for _, runtime := range []string{
		`{"metrics": {"serviceMonitor": {"interval": ""}}}`,
		`{"metrics": {"serviceMonitor": {"interval": "30s"}}}`,
		`{"metrics": {"serviceMonitor": {"interval": "1m30s"}}}`,
		`{"metrics": {"serviceMonitor": {"interval": "0s"}}}`,
		`{"metrics": {"serviceMonitor": {"interval": "30"}}}`,
		`{"ui": {"recentEvents": 0}}`,
		`{"ui": {"recentEvents": 1000}}`,
		`{"ui": {"recentEvents": 1001}}`,
	} {
		t.Run(runtime, func(t *testing.T) {
			text := `{"apiVersion": "config.knc.dev/v1alpha1", "kind": "Config", "runtime": ` + runtime + `}`
			schemaErr := def.Unify(ctx.CompileString(text)).Validate(cue.Concrete(true))
			file := filepath.Join(t.TempDir(), "knc.yaml")
			if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
				t.Fatal(err)
			}
			_, diags, err := project.Read(file)
			if err != nil {
				t.Fatal(err)
			}
			if schemaAccepts, kncAccepts := schemaErr == nil, !diags.HasErrors(); schemaAccepts != kncAccepts {
				t.Errorf("the schema accepts it: %v (%v); knc accepts it: %v (%v)", schemaAccepts, schemaErr, kncAccepts, diags)
			}
		})
	}
}
