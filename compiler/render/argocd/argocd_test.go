package argocd

import (
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

func TestConfigMapPatch(t *testing.T) {
	b, err := ConfigMapPatch("argocd")
	if err != nil {
		t.Fatal(err)
	}
	var cm struct {
		Kind     string `yaml:"kind"`
		Metadata struct {
			Name, Namespace string
		} `yaml:"metadata"`
		Data map[string]string `yaml:"data"`
	}
	if err := yaml.Unmarshal(b, &cm); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if cm.Kind != "ConfigMap" || cm.Metadata.Name != "argocd-cm" || cm.Metadata.Namespace != "argocd" {
		t.Errorf("got %s %s/%s, want ConfigMap argocd/argocd-cm", cm.Kind, cm.Metadata.Namespace, cm.Metadata.Name)
	}
	if len(cm.Data) != 7 {
		t.Errorf("%d health checks, want 7: the four kinds, the two flows and PingSource", len(cm.Data))
	}
	for k, v := range cm.Data {
		if !strings.HasPrefix(k, "resource.customizations.health.") || v != HealthLua {
			t.Errorf("%s holds something other than the health check", k)
		}
	}
}
