package plugins

import (
	"fmt"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/knc-dev/knc/compiler/project"
)

// The runtime's workload takes one of three forms:
//
//   - one replica with the embedded JetStream on a PersistentVolumeClaim
//     (a Deployment, the default);
//   - runtime.replicas ≥ 3 without runtime.nats: a StatefulSet whose pods'
//     embedded servers form one JetStream cluster over a headless Service,
//     with every stream replicated on three of them, so that losing a pod
//     loses no accepted event;
//   - runtime.nats.url: a Deployment of runtime.replicas stateless pods
//     sharing the streams of an external NATS cluster, authenticated by
//     the keys of runtime.nats.credentialsSecret.

// Names and ports of the clustered runtime.
const (
	// ClusterService is the headless Service that gives each pod of the
	// StatefulSet a stable DNS name for the NATS routes.
	ClusterService = "knc-runtime-cluster"
	ClusterPort    = 6222
	// NATSSecretPath is where runtime.nats.credentialsSecret is mounted.
	NATSSecretPath = "/etc/knc/nats"
	// clusterStreamReplicas is how many nodes keep each stream: three
	// survive the loss of one.
	clusterStreamReplicas = 3
)

func (s runtimeSettings) clustered() bool { return s.natsURL == "" && s.replicas > 1 }

// workload returns the objects that run the runtime in namespace ns.
func (p *kncPlugin) workload(ns string, set runtimeSettings, routesName, jetstreamName, clusterDomain string) []any {
	d := p.deployment(ns, set, routesName, jetstreamName)
	c := &d.Spec.Template.Spec.Containers[0]
	c.Args = append(c.Args, set.tracingArgs...)
	c.Args = append(c.Args, set.uiArgs...)
	c.Args = append(c.Args, set.keptArgs...)
	switch {
	case set.natsURL != "":
		return []any{externalNATS(d, set)}
	case set.clustered():
		if clusterDomain == "" {
			clusterDomain = project.Default().ClusterDomain
		}
		return clusterObjects(ns, d, set, clusterDomain)
	}
	return []any{dataClaim(ns, set), d}
}

func dataClaim(ns string, set runtimeSettings) *corev1.PersistentVolumeClaim {
	return &corev1.PersistentVolumeClaim{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "PersistentVolumeClaim"},
		ObjectMeta: meta(RuntimeDataVolume, ns),
		Spec: corev1.PersistentVolumeClaimSpec{
			AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:   corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: set.storageSize}},
		},
	}
}

// externalNATS turns the single-replica Deployment into stateless replicas
// of an external NATS cluster's client.
func externalNATS(d *appsv1.Deployment, set runtimeSettings) *appsv1.Deployment {
	replicas := set.replicas
	d.Spec.Replicas = &replicas
	// No volume is shared between pods, so they can be replaced one at a
	// time.
	d.Spec.Strategy = appsv1.DeploymentStrategy{Type: appsv1.RollingUpdateDeploymentStrategyType}
	pod := &d.Spec.Template.Spec
	c := &pod.Containers[0]
	c.Args = append(c.Args, "--nats-url", set.natsURL)
	for i := range pod.Volumes {
		if pod.Volumes[i].Name == "data" {
			pod.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}
	}
	if set.natsSecret != "" {
		optional := true
		pod.Volumes = append(pod.Volumes, corev1.Volume{Name: "nats-credentials", VolumeSource: corev1.VolumeSource{
			Secret: &corev1.SecretVolumeSource{SecretName: set.natsSecret, Optional: &optional},
		}})
		c.VolumeMounts = append(c.VolumeMounts, corev1.VolumeMount{Name: "nats-credentials", MountPath: NATSSecretPath, ReadOnly: true})
		c.Args = append(c.Args, "--nats-secret-dir", NATSSecretPath)
	}
	return d
}

// clusterObjects returns the StatefulSet whose pods form a JetStream
// cluster, its headless Service and a PodDisruptionBudget that keeps a
// quorum up during voluntary disruptions.
func clusterObjects(ns string, d *appsv1.Deployment, set runtimeSettings, clusterDomain string) []any {
	pod := d.Spec.Template
	spec := &pod.Spec
	c := &spec.Containers[0]
	var routes []string
	for i := range set.replicas {
		routes = append(routes, fmt.Sprintf("nats-route://%s-%d.%s.%s.svc.%s:%d", RuntimeName, i, ClusterService, ns, clusterDomain, ClusterPort))
	}
	c.Args = append(c.Args,
		"--cluster-name", RuntimeName,
		"--cluster-addr", ":"+strconv.Itoa(ClusterPort),
		"--cluster-routes", strings.Join(routes, ","),
		"--server-name", "$(POD_NAME)",
	)
	c.Env = append(c.Env, corev1.EnvVar{
		Name:      "POD_NAME",
		ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.name"}},
	})
	c.Ports = append(c.Ports, corev1.ContainerPort{Name: "nats-cluster", ContainerPort: ClusterPort, Protocol: corev1.ProtocolTCP})
	// Each pod has its own volume, from the claim template.
	var volumes []corev1.Volume
	for _, v := range spec.Volumes {
		if v.Name != "data" {
			volumes = append(volumes, v)
		}
	}
	spec.Volumes = volumes
	// Spread the nodes of the cluster over the machines, when there are
	// enough of them.
	spec.Affinity = &corev1.Affinity{PodAntiAffinity: &corev1.PodAntiAffinity{
		PreferredDuringSchedulingIgnoredDuringExecution: []corev1.WeightedPodAffinityTerm{{
			Weight: 100,
			PodAffinityTerm: corev1.PodAffinityTerm{
				LabelSelector: &metav1.LabelSelector{MatchLabels: selectorLabels},
				TopologyKey:   "kubernetes.io/hostname",
			},
		}},
	}}
	replicas := set.replicas
	claim := dataClaim(ns, set)
	sts := &appsv1.StatefulSet{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "StatefulSet"},
		ObjectMeta: meta(RuntimeName, ns),
		Spec: appsv1.StatefulSetSpec{
			Replicas:    &replicas,
			Selector:    &metav1.LabelSelector{MatchLabels: selectorLabels},
			ServiceName: ClusterService,
			// The nodes must start together: JetStream needs a quorum
			// before any pod can set up its streams and become ready.
			PodManagementPolicy: appsv1.ParallelPodManagement,
			Template:            pod,
			VolumeClaimTemplates: []corev1.PersistentVolumeClaim{{
				ObjectMeta: metav1.ObjectMeta{Name: "data", Labels: runtimeLabels},
				Spec:       claim.Spec,
			}},
		},
	}
	headless := &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: meta(ClusterService, ns),
		Spec: corev1.ServiceSpec{
			ClusterIP: corev1.ClusterIPNone,
			Selector:  selectorLabels,
			// The routes are needed before the pods are ready.
			PublishNotReadyAddresses: true,
			Ports: []corev1.ServicePort{{
				Name: "nats-cluster", Port: ClusterPort, TargetPort: intstr.FromString("nats-cluster"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
	maxUnavailable := intstr.FromInt32(1)
	pdb := &policyv1.PodDisruptionBudget{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "PodDisruptionBudget"},
		ObjectMeta: meta(RuntimeName, ns),
		Spec: policyv1.PodDisruptionBudgetSpec{
			MaxUnavailable: &maxUnavailable,
			Selector:       &metav1.LabelSelector{MatchLabels: selectorLabels},
		},
	}
	return []any{headless, sts, pdb}
}
