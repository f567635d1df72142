package plugins_test

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/plugins"
)

// podOf returns the pod template of the runtime's workload, whichever form
// it takes.
func podOf(t *testing.T, objs []plugins.Object) corev1.PodSpec {
	t.Helper()
	var deployments []appsv1.Deployment
	rendered(t, objs, "Deployment", &deployments)
	if len(deployments) == 1 {
		return deployments[0].Spec.Template.Spec
	}
	var sets []appsv1.StatefulSet
	rendered(t, objs, "StatefulSet", &sets)
	if len(sets) != 1 {
		t.Fatalf("%d Deployments and %d StatefulSets, want one workload", len(deployments), len(sets))
	}
	return sets[0].Spec.Template.Spec
}

func serviceNamed(t *testing.T, objs []plugins.Object, name string) *corev1.Service {
	t.Helper()
	var services []corev1.Service
	rendered(t, objs, "Service", &services)
	for i := range services {
		if services[i].Name == name {
			return &services[i]
		}
	}
	return nil
}

// TestAdminPortIsApartFromTheIngress checks, for each form of the
// workload, that /status and /metrics are served on a port of their own,
// which the ingress Service does not expose and the metrics Service does,
// and that the probes use it.
func TestAdminPortIsApartFromTheIngress(t *testing.T) {
	for _, form := range workloadForms {
		t.Run(form.name, func(t *testing.T) {
			objs := form.render(t)
			c := podOf(t, objs).Containers[0]
			if got := argValue(c.Args, "--admin-addr"); got != ":9090" {
				t.Errorf("--admin-addr %q, want :9090", got)
			}
			metricsPort := slices.IndexFunc(c.Ports, func(p corev1.ContainerPort) bool { return p.Name == "metrics" })
			if metricsPort < 0 || c.Ports[metricsPort].ContainerPort != plugins.AdminPort {
				t.Errorf("container ports %+v, want metrics on %d", c.Ports, plugins.AdminPort)
			}
			for name, p := range map[string]*corev1.Probe{"startup": c.StartupProbe, "liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Port != intstr.FromString("metrics") {
					t.Errorf("%s probe %+v, want an HTTP GET on the metrics port", name, p)
				}
			}
			sc := c.SecurityContext
			if sc == nil || sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
				sc.Capabilities == nil || !slices.Equal(sc.Capabilities.Drop, []corev1.Capability{"ALL"}) {
				t.Errorf("container security context %+v lost a setting", sc)
			}

			ingress := serviceNamed(t, objs, "knc-ingress")
			if ingress == nil {
				t.Fatal("no ingress Service")
			}
			wantIngress := []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP}}
			if diff := cmp.Diff(wantIngress, ingress.Spec.Ports); diff != "" {
				t.Errorf("ingress Service ports (-want +got):\n%s", diff)
			}
			metrics := serviceNamed(t, objs, plugins.MetricsService)
			if metrics == nil {
				t.Fatal("no metrics Service")
			}
			wantMetrics := []corev1.ServicePort{{Name: "metrics", Port: plugins.AdminPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP}}
			if diff := cmp.Diff(wantMetrics, metrics.Spec.Ports); diff != "" {
				t.Errorf("metrics Service ports (-want +got):\n%s", diff)
			}
			if metrics.Spec.Type != corev1.ServiceTypeClusterIP || metrics.Labels["knc.dev/metrics"] != "true" {
				t.Errorf("metrics Service type %q, labels %v; want ClusterIP labelled knc.dev/metrics=true", metrics.Spec.Type, metrics.Labels)
			}
			if ingress.Labels["knc.dev/metrics"] != "" {
				t.Errorf("the ingress Service carries the metrics label, so a ServiceMonitor would scrape it")
			}
			if slices.Contains(kinds(objs), "ServiceMonitor") {
				t.Error("a ServiceMonitor without runtime.metrics.serviceMonitor.enabled")
			}
		})
	}
}

func TestServiceMonitorIsOptIn(t *testing.T) {
	tests := []struct {
		name string
		sm   *project.ServiceMonitor
		want map[string]any // nil: no ServiceMonitor
	}{
		{name: "disabled", sm: &project.ServiceMonitor{Interval: "30s"}},
		{
			name: "enabled",
			sm:   &project.ServiceMonitor{Enabled: true},
			want: map[string]any{
				"apiVersion": "monitoring.coreos.com/v1",
				"kind":       "ServiceMonitor",
				"metadata": map[string]any{"name": "knc-runtime", "namespace": "shop", "labels": map[string]any{
					"app.kubernetes.io/name": "knc", "app.kubernetes.io/component": "runtime", "app.kubernetes.io/managed-by": "knc",
				}},
				"spec": map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{
						"app.kubernetes.io/name": "knc", "app.kubernetes.io/component": "runtime", "knc.dev/metrics": "true",
					}},
					"namespaceSelector": map[string]any{"matchNames": []any{"shop"}},
					"endpoints":         []any{map[string]any{"port": "metrics", "path": "/metrics", "scheme": "http"}},
				},
			},
		},
		{
			name: "interval and labels",
			// knc's own labels win over the ones given.
			sm: &project.ServiceMonitor{Enabled: true, Interval: "15s", Labels: map[string]string{"release": "prometheus", "app.kubernetes.io/name": "other"}},
			want: map[string]any{
				"apiVersion": "monitoring.coreos.com/v1",
				"kind":       "ServiceMonitor",
				"metadata": map[string]any{"name": "knc-runtime", "namespace": "shop", "labels": map[string]any{
					"app.kubernetes.io/name": "knc", "app.kubernetes.io/component": "runtime", "app.kubernetes.io/managed-by": "knc",
					"release": "prometheus",
				}},
				"spec": map[string]any{
					"selector": map[string]any{"matchLabels": map[string]any{
						"app.kubernetes.io/name": "knc", "app.kubernetes.io/component": "runtime", "knc.dev/metrics": "true",
					}},
					"namespaceSelector": map[string]any{"matchNames": []any{"shop"}},
					"endpoints":         []any{map[string]any{"port": "metrics", "path": "/metrics", "scheme": "http", "interval": "15s"}},
				},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			objs, err := plugins.NewKnc(plugins.KncOptions{Image: "img"}).Render(&plugins.Request{
				Namespace: "shop", Table: oneBroker(),
				Config: runtimeConfig(&project.Runtime{Metrics: &project.Metrics{ServiceMonitor: tc.sm}})})
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			for _, o := range objs {
				if o["kind"] == "ServiceMonitor" {
					got = o
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("ServiceMonitor (-want +got):\n%s", diff)
			}
		})
	}
}

// workloadForms are the three forms of the runtime's workload: one
// replica, a JetStream cluster, and replicas of an external NATS.
var workloadForms = []workloadForm{
	{"one replica", nil},
	{"JetStream cluster", &project.Runtime{Replicas: ptr[int64](3)}},
	{"external NATS", &project.Runtime{Replicas: ptr[int64](2), NATS: &project.NATSRuntime{URL: "nats://nats:4222"}}},
}

type workloadForm struct {
	name    string
	runtime *project.Runtime
}

// render renders the runtime of one Broker in this form.
func (f workloadForm) render(t *testing.T) []plugins.Object {
	t.Helper()
	objs, err := plugins.NewKnc(plugins.KncOptions{Image: "img"}).Render(&plugins.Request{
		Namespace: "shop", Table: oneBroker(), Config: runtimeConfig(f.runtime)})
	if err != nil {
		t.Fatal(err)
	}
	return objs
}
