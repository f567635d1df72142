package plugins_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/plugins"
)

func runtimeConfig(r *project.Runtime) *project.Config {
	c := project.Default()
	c.Runtime = r
	return c
}

func ptr[T any](v T) *T { return &v }

func oneBroker() *routing.Table {
	return &routing.Table{APIVersion: routing.APIVersion, Kind: routing.Kind, Brokers: []routing.Broker{{
		Source: routing.Source{Namespace: "shop", Name: "default"}, Path: routing.BrokerPath("shop", "default"),
	}}}
}

// rendered decodes the objects of one kind into out, a pointer to a slice.
func rendered(t *testing.T, objs []plugins.Object, kind string, out any) {
	t.Helper()
	var items []plugins.Object
	for _, o := range objs {
		if o["kind"] == kind {
			items = append(items, o)
		}
	}
	b, err := json.Marshal(items)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatal(err)
	}
}

func kinds(objs []plugins.Object) []string {
	var out []string
	for _, o := range objs {
		out = append(out, o["kind"].(string))
	}
	slices.Sort(out)
	return out
}

func configData(t *testing.T, objs []plugins.Object) map[string]string {
	t.Helper()
	var cms []corev1.ConfigMap
	rendered(t, objs, "ConfigMap", &cms)
	for _, cm := range cms {
		if strings.HasPrefix(cm.Name, plugins.JetStreamPrefix) {
			return cm.Data
		}
	}
	t.Fatal("no JetStream settings")
	return nil
}

func argValue(args []string, flag string) string {
	for i, a := range args {
		if a == flag && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

func TestClusteredRuntimeIsAStatefulSet(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	objs, err := p.Render(&plugins.Request{Namespace: "shop", Table: oneBroker(),
		Config: runtimeConfig(&project.Runtime{Replicas: ptr[int64](3), Durability: "fsync", Storage: &project.Storage{Size: "5Gi"}})})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"ClusterRole", "ClusterRole", "ConfigMap", "ConfigMap", "PodDisruptionBudget", "Role", "RoleBinding", "RoleBinding", "Service", "Service", "Service", "ServiceAccount", "StatefulSet"}
	if diff := cmp.Diff(want, kinds(objs)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	var sets []appsv1.StatefulSet
	rendered(t, objs, "StatefulSet", &sets)
	sts := sets[0]
	if *sts.Spec.Replicas != 3 || sts.Spec.PodManagementPolicy != appsv1.ParallelPodManagement || sts.Spec.ServiceName != plugins.ClusterService {
		t.Errorf("replicas %d, pod management %q, service %q; want 3, Parallel, %s", *sts.Spec.Replicas, sts.Spec.PodManagementPolicy, sts.Spec.ServiceName, plugins.ClusterService)
	}
	if len(sts.Spec.VolumeClaimTemplates) != 1 || sts.Spec.VolumeClaimTemplates[0].Name != "data" ||
		sts.Spec.VolumeClaimTemplates[0].Spec.Resources.Requests.Storage().String() != "5Gi" {
		t.Errorf("volume claim templates = %+v, want one of 5Gi named data", sts.Spec.VolumeClaimTemplates)
	}
	c := sts.Spec.Template.Spec.Containers[0]
	routes := "nats-route://knc-runtime-0.knc-runtime-cluster.shop.svc.cluster.local:6222," +
		"nats-route://knc-runtime-1.knc-runtime-cluster.shop.svc.cluster.local:6222," +
		"nats-route://knc-runtime-2.knc-runtime-cluster.shop.svc.cluster.local:6222"
	for flag, want := range map[string]string{
		"--cluster-name": "knc-runtime", "--cluster-addr": ":6222", "--cluster-routes": routes,
		"--server-name": "$(POD_NAME)", "--stream-replicas": "$(KNC_STREAM_REPLICAS)",
	} {
		if got := argValue(c.Args, flag); got != want {
			t.Errorf("%s %q, want %q", flag, got, want)
		}
	}
	// Durability reaches the runtime only through the ConfigMap, so that
	// a patch of KNC_DURABILITY (as of KNC_STREAM_REPLICAS) is obeyed: a
	// --fsync beside it would contradict a patched "file" and stop the
	// runtime at start.
	if got := argValue(c.Args, "--durability"); got != "$(KNC_DURABILITY)" || slices.Contains(c.Args, "--fsync") {
		t.Errorf("args %v, want --durability $(KNC_DURABILITY) and no --fsync", c.Args)
	}
	if got := configData(t, objs)["KNC_DURABILITY"]; got != "fsync" {
		t.Errorf("KNC_DURABILITY = %q, want fsync", got)
	}
	if got := configData(t, objs)["KNC_STREAM_REPLICAS"]; got != "3" {
		t.Errorf("KNC_STREAM_REPLICAS = %q, want 3", got)
	}
	for _, v := range sts.Spec.Template.Spec.Volumes {
		if v.PersistentVolumeClaim != nil {
			t.Errorf("pods share the claim %s; each needs its own", v.PersistentVolumeClaim.ClaimName)
		}
	}
	var services []corev1.Service
	rendered(t, objs, "Service", &services)
	var headless *corev1.Service
	for i := range services {
		if services[i].Name == plugins.ClusterService {
			headless = &services[i]
		}
	}
	if headless == nil || headless.Spec.ClusterIP != corev1.ClusterIPNone || !headless.Spec.PublishNotReadyAddresses {
		t.Errorf("headless Service = %+v, want clusterIP None publishing pods that are not ready", headless)
	}
}

func TestExternalNATSRuntimeIsStateless(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	objs, err := p.Render(&plugins.Request{Namespace: "shop", Table: oneBroker(), Config: runtimeConfig(&project.Runtime{
		Replicas: ptr[int64](2),
		NATS:     &project.NATSRuntime{URL: "nats://nats.messaging:4222", CredentialsSecret: "nats-creds"},
	})})
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds(objs) {
		if k == "PersistentVolumeClaim" || k == "StatefulSet" {
			t.Errorf("a runtime on external NATS has a %s", k)
		}
	}
	var deps []appsv1.Deployment
	rendered(t, objs, "Deployment", &deps)
	d := deps[0]
	if *d.Spec.Replicas != 2 || d.Spec.Strategy.Type != appsv1.RollingUpdateDeploymentStrategyType {
		t.Errorf("replicas %d, strategy %q; want 2, RollingUpdate", *d.Spec.Replicas, d.Spec.Strategy.Type)
	}
	c := d.Spec.Template.Spec.Containers[0]
	if got := argValue(c.Args, "--nats-url"); got != "nats://nats.messaging:4222" {
		t.Errorf("--nats-url %q", got)
	}
	if got := argValue(c.Args, "--nats-secret-dir"); got != plugins.NATSSecretPath {
		t.Errorf("--nats-secret-dir %q, want %s", got, plugins.NATSSecretPath)
	}
	var secret *corev1.SecretVolumeSource
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret != nil {
			secret = v.Secret
		}
		if v.PersistentVolumeClaim != nil {
			t.Errorf("volume %s uses a claim", v.Name)
		}
	}
	if secret == nil || secret.SecretName != "nats-creds" {
		t.Errorf("secret volume = %+v, want nats-creds", secret)
	}
}

func TestRuntimeReplicaDiagnostics(t *testing.T) {
	p := plugins.NewKnc(plugins.KncOptions{Image: "img"})
	tests := []struct {
		name    string
		runtime *project.Runtime
		want    string
	}{
		{"two embedded nodes", &project.Runtime{Replicas: ptr[int64](2)}, "at least 3 replicas"},
		{"a secret without a URL", &project.Runtime{NATS: &project.NATSRuntime{CredentialsSecret: "s"}}, "needs the url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := p.Render(&plugins.Request{Namespace: "shop", Table: oneBroker(), Config: runtimeConfig(tt.runtime)})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Render = %v, want an error containing %q", err, tt.want)
			}
		})
	}
	if _, err := p.Render(&plugins.Request{Namespace: "shop", Table: oneBroker(), Config: runtimeConfig(&project.Runtime{Replicas: ptr[int64](5)})}); err != nil {
		t.Errorf("five embedded nodes: %v", err)
	}
}
