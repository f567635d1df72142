package plugins

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/knc-dev/knc/compiler/backend"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/compiler/routes"
	"github.com/knc-dev/knc/internal/knative"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/runtimeconfig"
)

// Names of the runtime's objects in each namespace it serves.
const (
	RuntimeName        = "knc-runtime"
	RuntimeDataVolume  = "knc-runtime-data"
	RoutesConfigPrefix = "knc-routes-"
	JetStreamPrefix    = "knc-jetstream-"
	// RuntimeRole is the Role, in every namespace a runtime reads, that
	// lets it read the four kinds and write their status.
	RuntimeRole = "knc-runtime"
	// AddressableResolver is the aggregated ClusterRole the runtime uses to
	// read the address of any Addressable; AddressableKinds is the
	// ClusterRole that adds knc's own addressable kinds to it, as the
	// control-plane contract asks of each component.
	AddressableResolver = "knc-runtime-addressable-resolver"
	AddressableKinds    = "knc-addressable-resolver"
)

// Paths inside the runtime's container.
const (
	TablePath = "/etc/knc/routing/table.json"
	DataDir   = "/var/lib/knc"
	// TempDir is the container's writable /tmp, where Graphviz keeps the
	// machine code it compiles from its WebAssembly at every start of knc.
	TempDir  = "/tmp"
	HTTPPort = 8080
	// AdminPort serves /status, /metrics and the probes; the ingress
	// Service does not expose it.
	AdminPort = 9090
)

// tempSizeLimit bounds /tmp: Graphviz's compiled code takes about 6 MiB
// per version of its WebAssembly runtime.
var tempSizeLimit = resource.MustParse("64Mi")

// MetricsService is the ClusterIP Service in front of the runtime's admin
// port, for Prometheus to scrape; metricsLabel marks it, for the
// ServiceMonitor to select it alone.
const (
	MetricsService = "knc-runtime-metrics"
	metricsLabel   = "knc.dev/metrics"
)

// Defaults of the runtime settings in knc.yaml.
const (
	DefaultStorageSize   = "1Gi"
	DefaultMaxEventBytes = 4 << 20
	DefaultTTL           = 255
	DefaultDurability    = "file"
	// storeShare is the part of the volume JetStream may fill; the rest is
	// left for its indexes and for the files it rewrites while compacting.
	storeShare = 0.9
	// The runtime's resident set measured under load is 114–142 MiB, and
	// 131 MiB idle with 10,000 Triggers (docs/performance.md, "Memory and
	// the garbage collector"). The request covers the highest of these
	// with a third to spare; the limit is about two and a half times it,
	// room for the heap to grow to five times its live size between
	// collections (GOGC 400) and for bursts of large events.
	DefaultMemoryRequest = "192Mi"
	DefaultMemoryLimit   = "384Mi"
	// memLimitShare of the container's limit is the Go runtime's soft
	// memory limit (GOMEMLIMIT): near it, the collector runs more often
	// instead of letting the kernel kill the container.
	memLimitShare = 0.9
)

// Labels on the runtime's objects; the first two select its pods.
var (
	selectorLabels = map[string]string{
		"app.kubernetes.io/name":      "knc",
		"app.kubernetes.io/component": "runtime",
	}
	runtimeLabels = func() map[string]string {
		l := maps.Clone(selectorLabels)
		l["app.kubernetes.io/managed-by"] = "knc"
		return l
	}()
)

// KncOptions configure knc's own plugin.
type KncOptions struct {
	// Image is the runtime's container image.
	Image string
}

// NewKnc returns knc's own plugin. It runs the Brokers of class "knc" and
// the Channels of kind JetStreamChannel and InMemoryChannel (which knc
// makes durable) on one runtime Deployment per namespace, fed the routing
// table of that namespace.
func NewKnc(opts KncOptions) Plugin { return &kncPlugin{opts: opts} }

type kncPlugin struct{ opts KncOptions }

func (p *kncPlugin) Name() string { return "knc" }

func (p *kncPlugin) Claims() Claims {
	return Claims{
		BrokerClasses: []string{model.BrokerClassKnc},
		ChannelKinds: []ChannelKind{
			{APIVersion: model.ChannelAPIVersionKnc, Kind: model.ChannelKindKnc},
			{APIVersion: knative.MessagingV1, Kind: knative.KindInMemoryChannel},
		},
	}
}

// runtimeSettings are the JetStream and runtime settings derived from
// knc.yaml, written to a ConfigMap the Deployment reads its flags from.
type runtimeSettings struct {
	replicas      int32
	storageSize   resource.Quantity
	maxStoreBytes int64
	maxEventBytes int64
	ttl           int64
	durability    string
	// streamReplicas is how many JetStream servers keep each stream.
	streamReplicas int
	// natsURL and natsSecret are runtime.nats: an external NATS cluster.
	natsURL, natsSecret string
	// memoryRequest and memoryLimit size the container's memory.
	memoryRequest, memoryLimit resource.Quantity
	// tracingData and tracingArgs are runtime.tracing (tracingConfig).
	tracingData map[string]string
	tracingArgs []string
	// uiData and uiArgs are runtime.ui, set only when it asks for
	// something.
	uiData map[string]string
	uiArgs []string
	// keptData and keptArgs are runtime.keptLetters, set only for the
	// bounds it gives.
	keptData map[string]string
	keptArgs []string
	// serviceMonitor is runtime.metrics.serviceMonitor when enabled.
	serviceMonitor *project.ServiceMonitor
}

// keptLettersConfig carries runtime.keptLetters to the runtime: its bounds
// in the ConfigMap, read by the flags.
func keptLettersConfig(k *project.KeptLetters, pos diag.Pos, diags diag.List) (map[string]string, []string, diag.List) {
	if k == nil {
		return nil, nil, diags
	}
	data := map[string]string{}
	var args []string
	if k.MaxSize != "" {
		q, err := resource.ParseQuantity(k.MaxSize)
		if err != nil || q.Sign() <= 0 {
			diags.Add(pos, "runtime.keptLetters.maxSize", "%q is not a size above 0 such as 1Gi or 512Mi", k.MaxSize)
		} else {
			data[runtimeconfig.Key("kept-max-bytes")] = strconv.FormatInt(q.Value(), 10)
			args = append(args, "--kept-max-bytes", runtimeconfig.Ref("kept-max-bytes"))
		}
	}
	if k.MaxAge != "" {
		d, err := time.ParseDuration(k.MaxAge)
		if err != nil || d <= 0 {
			diags.Add(pos, "runtime.keptLetters.maxAge", "%q is not a duration above 0 such as 168h or 30m", k.MaxAge)
		} else {
			data[runtimeconfig.Key("kept-max-age")] = d.String()
			args = append(args, "--kept-max-age", runtimeconfig.Ref("kept-max-age"))
		}
	}
	return data, args, diags
}

func settings(cfg *project.Config) (runtimeSettings, diag.List) {
	s := runtimeSettings{replicas: 1, maxEventBytes: DefaultMaxEventBytes, ttl: DefaultTTL, durability: DefaultDurability, streamReplicas: 1}
	size := DefaultStorageSize
	memRequest, memLimit := DefaultMemoryRequest, DefaultMemoryLimit
	var diags diag.List
	pos := diag.Pos{File: cfg.File}
	if r := cfg.Runtime; r != nil {
		if r.Replicas != nil {
			s.replicas = int32(*r.Replicas)
		}
		if r.MaxEventBytes != nil {
			s.maxEventBytes = *r.MaxEventBytes
		}
		if r.TTL != nil {
			s.ttl = *r.TTL
		}
		if r.Durability != "" {
			s.durability = r.Durability
		}
		if r.Storage != nil && r.Storage.Size != "" {
			size = r.Storage.Size
		}
		if r.Memory != nil {
			if r.Memory.Limit != "" {
				memLimit = r.Memory.Limit
				if r.Memory.Request == "" {
					// A limit below the default request lowers both.
					if l, err := resource.ParseQuantity(memLimit); err == nil && l.Cmp(resource.MustParse(memRequest)) < 0 {
						memRequest = memLimit
					}
				}
			}
			if r.Memory.Request != "" {
				memRequest = r.Memory.Request
			}
		}
		s.tracingData, s.tracingArgs = tracingConfig(r.Tracing)
		if r.UI != nil && r.UI.RecentEvents != nil && *r.UI.RecentEvents > 0 {
			s.uiData = map[string]string{runtimeconfig.Key("ui-recent-events"): strconv.FormatInt(*r.UI.RecentEvents, 10)}
			s.uiArgs = []string{"--ui-recent-events", runtimeconfig.Ref("ui-recent-events")}
		}
		s.keptData, s.keptArgs, diags = keptLettersConfig(r.KeptLetters, pos, diags)
		if r.Metrics != nil && r.Metrics.ServiceMonitor != nil && r.Metrics.ServiceMonitor.Enabled {
			s.serviceMonitor = r.Metrics.ServiceMonitor
		}
		if r.NATS != nil {
			s.natsURL, s.natsSecret = r.NATS.URL, r.NATS.CredentialsSecret
			if s.natsURL == "" && s.natsSecret != "" {
				diags.Add(pos, "runtime.nats.url", "runtime.nats.credentialsSecret needs the url of the NATS cluster")
			}
		}
	}
	switch {
	case s.natsURL != "":
		s.streamReplicas = clusterStreamReplicas
	case s.replicas == 2:
		// Two JetStream nodes have no quorum once one is lost: no better
		// than one, and twice the cost.
		diags.Add(pos, "runtime.replicas", "an embedded JetStream cluster needs at least 3 replicas to survive the loss of one, not 2; use 1, or 3 or more")
	case s.replicas > 2:
		s.streamReplicas = clusterStreamReplicas
	}
	var memErr bool
	for _, m := range []struct {
		field, value string
		into         *resource.Quantity
	}{{"runtime.memory.request", memRequest, &s.memoryRequest}, {"runtime.memory.limit", memLimit, &s.memoryLimit}} {
		q, err := resource.ParseQuantity(m.value)
		if err != nil {
			diags.Add(pos, m.field, "%q is not a size such as 256Mi: %v", m.value, err)
			memErr = true
			continue
		}
		*m.into = q
	}
	if !memErr && s.memoryRequest.Cmp(s.memoryLimit) > 0 {
		diags.Add(pos, "runtime.memory.request", "the request %s is above the limit %s: the API server refuses such a container; raise runtime.memory.limit or lower the request", s.memoryRequest.String(), s.memoryLimit.String())
	}
	q, err := resource.ParseQuantity(size)
	if err != nil {
		diags.Add(pos, "runtime.storage.size", "%q is not a size such as 10Gi: %v", size, err)
		return s, diags
	}
	s.storageSize = q
	s.maxStoreBytes = int64(float64(q.Value()) * storeShare)
	return s, diags
}

func (p *kncPlugin) Render(req *Request) ([]Object, error) {
	if req.Table == nil || len(req.Table.Brokers)+len(req.Table.Channels) == 0 {
		return nil, nil
	}
	set, diags := settings(req.Config)
	if len(diags) > 0 {
		return nil, diags
	}
	ns := req.Namespace
	tableJSON := req.TableJSON
	if tableJSON == nil {
		var err error
		if tableJSON, err = EncodeTable(req.Table); err != nil {
			return nil, err
		}
	}
	routeMaps, routesNames, err := routeConfigMaps(ns, req.Table, tableJSON)
	if err != nil {
		return nil, err
	}
	jetstream := map[string]string{
		// Flags of knc runtime, read through $(VAR) in the container's
		// args: a key here that no argument names never reaches it.
		runtimeconfig.Key("max-body-bytes"):  strconv.FormatInt(set.maxEventBytes, 10),
		runtimeconfig.Key("max-store-bytes"): strconv.FormatInt(set.maxStoreBytes, 10),
		runtimeconfig.Key("durability"):      set.durability,
		runtimeconfig.Key("stream-replicas"): strconv.Itoa(set.streamReplicas),
		runtimeconfig.Key("ttl"):             strconv.FormatInt(set.ttl, 10),
		runtimeconfig.Key("cluster-domain"):  req.Config.ClusterDomain,
	}
	maps.Copy(jetstream, set.tracingData)
	maps.Copy(jetstream, set.uiData)
	maps.Copy(jetstream, set.keptData)
	jetstreamName := JetStreamPrefix + contentHash(mapBytes(jetstream))

	var objs []any
	objs = append(objs,
		&corev1.ServiceAccount{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ServiceAccount"},
			ObjectMeta: meta(RuntimeName, ns),
		},
		&corev1.ConfigMap{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: meta(jetstreamName, ns),
			Data:       jetstream,
		},
	)
	workload := p.workload(ns, set, routesNames[0], jetstreamName, req.Config.ClusterDomain)
	if len(routesNames) > 1 {
		mountParts(workload, routesNames)
	}
	objs = append(objs, workload...)
	objs = append(objs,
		&corev1.Service{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
			ObjectMeta: meta(routes.IngressService, ns),
			Spec: corev1.ServiceSpec{
				Selector: selectorLabels,
				// Only the ingress: /status and /metrics are on the
				// admin port, which MetricsService exposes.
				Ports: []corev1.ServicePort{{
					Name: "http", Port: 80, TargetPort: intstr.FromString("http"), Protocol: corev1.ProtocolTCP,
				}},
			},
		},
		metricsService(ns),
	)
	if set.serviceMonitor != nil {
		objs = append(objs, serviceMonitor(ns, set.serviceMonitor))
	}
	objs = append(objs, rbac(ns, req.Table)...)

	// The routing table is built as a map directly: encoding a table of
	// thousands of routes to JSON and back, to make it generic, would cost
	// more than building it.
	out := make([]Object, 0, len(objs)+len(routeMaps))
	out = append(out, routeMaps...)
	for _, o := range objs {
		obj, err := toObject(o)
		if err != nil {
			return nil, err
		}
		out = append(out, obj)
	}
	return out, nil
}

func (p *kncPlugin) deployment(ns string, set runtimeSettings, routesName, jetstreamName string) *appsv1.Deployment {
	replicas := set.replicas
	nonRoot := true
	noEscalation := false
	readOnly := true
	user := int64(65532)
	// The drain at SIGTERM takes up to ten seconds; the rest is margin.
	grace := int64(30)
	probe := func(path string, period, failures int32) *corev1.Probe {
		return &corev1.Probe{
			ProbeHandler:     corev1.ProbeHandler{HTTPGet: &corev1.HTTPGetAction{Path: path, Port: intstr.FromString("metrics")}},
			PeriodSeconds:    period,
			FailureThreshold: failures,
		}
	}
	return &appsv1.Deployment{
		TypeMeta:   metav1.TypeMeta{APIVersion: "apps/v1", Kind: "Deployment"},
		ObjectMeta: meta(RuntimeName, ns),
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels},
			// The JetStream volume can be mounted by one pod at a time.
			Strategy: appsv1.DeploymentStrategy{Type: appsv1.RecreateDeploymentStrategyType},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: runtimeLabels},
				Spec: corev1.PodSpec{
					ServiceAccountName:            RuntimeName,
					TerminationGracePeriodSeconds: &grace,
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot:   &nonRoot,
						RunAsUser:      &user,
						RunAsGroup:     &user,
						FSGroup:        &user,
						SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
					},
					Containers: []corev1.Container{{
						Name:  "runtime",
						Image: p.opts.Image,
						Args: []string{
							"--table", TablePath,
							"--data-dir", DataDir,
							"--http-addr", ":" + strconv.Itoa(HTTPPort),
							"--admin-addr", ":" + strconv.Itoa(AdminPort),
							"--max-body-bytes", runtimeconfig.Ref("max-body-bytes"),
							"--max-store-bytes", runtimeconfig.Ref("max-store-bytes"),
							"--durability", runtimeconfig.Ref("durability"),
							"--ttl", runtimeconfig.Ref("ttl"),
							"--stream-replicas", runtimeconfig.Ref("stream-replicas"),
							"--cluster-domain", runtimeconfig.Ref("cluster-domain"),
							"--log-format", "json",
						},
						EnvFrom: []corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: jetstreamName}}}},
						Env: []corev1.EnvVar{{
							Name:      "POD_NAMESPACE",
							ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "metadata.namespace"}},
						}, {
							Name:  "GOMEMLIMIT",
							Value: strconv.FormatInt(int64(float64(set.memoryLimit.Value())*memLimitShare), 10),
						}},
						Ports: []corev1.ContainerPort{
							{Name: "http", ContainerPort: HTTPPort, Protocol: corev1.ProtocolTCP},
							{Name: "metrics", ContainerPort: AdminPort, Protocol: corev1.ProtocolTCP},
						},
						// JetStream recovers its streams before /healthz
						// answers; give it a minute.
						StartupProbe:   probe("/healthz", 2, 30),
						LivenessProbe:  probe("/healthz", 10, 3),
						ReadinessProbe: probe("/readyz", 5, 2),
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{
								corev1.ResourceCPU:    resource.MustParse("100m"),
								corev1.ResourceMemory: set.memoryRequest,
							},
							// No CPU limit: throttling would stretch the
							// latency of every event; memory is what a
							// node cannot take back.
							Limits: corev1.ResourceList{corev1.ResourceMemory: set.memoryLimit},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: &noEscalation,
							ReadOnlyRootFilesystem:   &readOnly,
							Capabilities:             &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
						},
						VolumeMounts: []corev1.VolumeMount{
							{Name: "routing", MountPath: "/etc/knc/routing", ReadOnly: true},
							{Name: "data", MountPath: DataDir},
							{Name: "tmp", MountPath: TempDir},
						},
					}},
					Volumes: []corev1.Volume{
						{Name: "routing", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: routesName}}}},
						{Name: "data", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: RuntimeDataVolume}}},
						// The root file system is read-only. Without a
						// writable /tmp every start of the container
						// compiles Graphviz again (docs/cluster.md); with
						// it, a restarted container finds the code of the
						// one before.
						{Name: "tmp", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{SizeLimit: &tempSizeLimit}}},
					},
				},
			},
		},
	}
}

// metricsService exposes the runtime's admin port, /metrics and /status,
// inside the cluster only, apart from the ingress Service.
func metricsService(ns string) *corev1.Service {
	m := meta(MetricsService, ns)
	m.Labels = merge(runtimeLabels, map[string]string{metricsLabel: "true"})
	return &corev1.Service{
		TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
		ObjectMeta: m,
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selectorLabels,
			Ports: []corev1.ServicePort{{
				Name: "metrics", Port: AdminPort, TargetPort: intstr.FromString("metrics"), Protocol: corev1.ProtocolTCP,
			}},
		},
	}
}

// serviceMonitor asks a Prometheus Operator to scrape MetricsService of
// namespace ns. It is written as a map: knc does not depend on the
// operator's Go types for one object.
func serviceMonitor(ns string, sm *project.ServiceMonitor) Object {
	endpoint := map[string]any{"port": "metrics", "path": "/metrics", "scheme": "http"}
	if sm.Interval != "" {
		endpoint["interval"] = sm.Interval
	}
	return Object{
		"apiVersion": "monitoring.coreos.com/v1",
		"kind":       "ServiceMonitor",
		"metadata": map[string]any{
			"name":      RuntimeName,
			"namespace": ns,
			"labels":    stringMap(merge(sm.Labels, runtimeLabels)),
		},
		"spec": map[string]any{
			"selector":          map[string]any{"matchLabels": stringMap(merge(selectorLabels, map[string]string{metricsLabel: "true"}))},
			"namespaceSelector": map[string]any{"matchNames": []any{ns}},
			"endpoints":         []any{endpoint},
		},
	}
}

// rbac grants the runtime of namespace ns what it needs: in every namespace
// whose objects its table holds or whose Addressables it must resolve, read
// the four kinds, write only their status, and read Addressables.
func rbac(ns string, t *routing.Table) []any {
	namespaces := readNamespaces(ns, t)
	subject := []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: RuntimeName, Namespace: ns}}
	read := []string{"get", "list", "watch"}
	var objs []any
	objs = append(objs,
		&rbacv1.ClusterRole{
			TypeMeta: metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: AddressableKinds, Labels: merge(managedLabels(), map[string]string{
				"duck.knative.dev/addressable": "true",
			})},
			Rules: []rbacv1.PolicyRule{
				{APIGroups: []string{knative.GroupEventing}, Resources: []string{"brokers", "brokers/status"}, Verbs: read},
				{APIGroups: []string{knative.GroupMessaging}, Resources: []string{"channels", "channels/status"}, Verbs: read},
				// A v1 Service is Addressable by the contract's special
				// case.
				{APIGroups: []string{""}, Resources: []string{"services"}, Verbs: read},
			},
		},
		&rbacv1.ClusterRole{
			TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole"},
			ObjectMeta: metav1.ObjectMeta{Name: AddressableResolver, Labels: managedLabels()},
			// Every ClusterRole labelled as Knative's addressable-resolver
			// parts (knc's, Knative Serving's, …) is aggregated here by the
			// cluster's controller manager.
			AggregationRule: &rbacv1.AggregationRule{ClusterRoleSelectors: []metav1.LabelSelector{{
				MatchLabels: map[string]string{"duck.knative.dev/addressable": "true"},
			}}},
		},
	)
	for _, target := range namespaces {
		objs = append(objs,
			&rbacv1.Role{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "Role"},
				ObjectMeta: metav1.ObjectMeta{Name: RuntimeRole, Namespace: target, Labels: managedLabels()},
				Rules: []rbacv1.PolicyRule{
					{APIGroups: []string{knative.GroupEventing}, Resources: []string{"brokers", "triggers"}, Verbs: read},
					{APIGroups: []string{knative.GroupMessaging}, Resources: []string{"channels", "subscriptions"}, Verbs: read},
					{APIGroups: []string{knative.GroupEventing}, Resources: []string{"brokers/status", "triggers/status"}, Verbs: []string{"patch"}},
					{APIGroups: []string{knative.GroupMessaging}, Resources: []string{"channels/status", "subscriptions/status"}, Verbs: []string{"patch"}},
					// The runtime fires the PingSources of its table and
					// reports their status.
					{APIGroups: []string{knative.GroupSources}, Resources: []string{"pingsources"}, Verbs: read},
					{APIGroups: []string{knative.GroupSources}, Resources: []string{"pingsources/status"}, Verbs: []string{"patch"}},
					{APIGroups: []string{knative.GroupFlows}, Resources: []string{"sequences", "parallels"}, Verbs: read},
					{APIGroups: []string{knative.GroupFlows}, Resources: []string{"sequences/status", "parallels/status"}, Verbs: []string{"patch"}},
				},
			},
			&rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: RuntimeName + "-" + ns, Namespace: target, Labels: managedLabels()},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: RuntimeRole},
				Subjects:   subject,
			},
			&rbacv1.RoleBinding{
				TypeMeta:   metav1.TypeMeta{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "RoleBinding"},
				ObjectMeta: metav1.ObjectMeta{Name: RuntimeName + "-" + ns + "-addressables", Namespace: target, Labels: managedLabels()},
				RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: AddressableResolver},
				Subjects:   subject,
			},
		)
	}
	return objs
}

// readNamespaces lists, sorted, the namespaces the runtime of ns reads:
// its own, those of the Triggers and Subscriptions it serves, and those of
// the references the compiler left for it to resolve.
func readNamespaces(ns string, t *routing.Table) []string {
	set := map[string]bool{ns: true}
	dest := func(d *routing.Destination) {
		if d != nil && d.Ref != nil && d.Ref.Namespace != "" {
			set[d.Ref.Namespace] = true
		}
	}
	delivery := func(d *routing.Delivery) {
		if d != nil {
			dest(d.DeadLetterSink)
		}
	}
	for _, b := range t.Brokers {
		set[b.Namespace] = true
		delivery(b.Delivery)
		for _, tr := range b.Triggers {
			set[tr.Namespace] = true
			dest(&tr.Subscriber)
			delivery(tr.Delivery)
		}
	}
	for _, c := range t.Channels {
		set[c.Namespace] = true
		delivery(c.Delivery)
		for _, s := range c.Subscriptions {
			set[s.Namespace] = true
			dest(s.Subscriber)
			dest(s.Reply)
			delivery(s.Delivery)
		}
	}
	// The PingSources it fires, whose status it writes.
	for _, p := range t.PingSources {
		set[p.Namespace] = true
		dest(&p.Sink)
	}
	return slices.Sorted(maps.Keys(set))
}

func meta(name, ns string) metav1.ObjectMeta {
	return metav1.ObjectMeta{Name: name, Namespace: ns, Labels: runtimeLabels}
}

func stringMap(m map[string]string) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

func managedLabels() map[string]string {
	return map[string]string{"app.kubernetes.io/managed-by": "knc"}
}

func merge(a, b map[string]string) map[string]string {
	out := make(map[string]string, len(a)+len(b))
	maps.Copy(out, a)
	maps.Copy(out, b)
	return out
}

// MaxTableBytes bounds the encoded routing table of one ConfigMap; see
// backend.MaxTableBytes.
const MaxTableBytes = backend.MaxTableBytes

// TableDir is where the parts of a split routing table are mounted, all in
// one directory; the runtime reads and merges them (routing.Read).
const TableDir = "/etc/knc/routing"

// routeConfigMaps returns the ConfigMaps that hold the routing table of ns
// and their names: one holding table.json when it fits, else one per part
// of the split table (routing.Split), named after the whole table's hash
// and holding routing-table-N.json. A changed table gets new names, so that
// the runtime restarts on a consistent set.
func routeConfigMaps(ns string, t *routing.Table, tableJSON []byte) ([]Object, []string, error) {
	configMap := func(name, key string, data []byte) Object {
		return Object{
			"apiVersion": "v1",
			"kind":       "ConfigMap",
			"metadata":   map[string]any{"name": name, "namespace": ns, "labels": stringMap(runtimeLabels)},
			"data":       map[string]any{key: string(data)},
		}
	}
	hash := contentHash(tableJSON)
	if len(tableJSON) <= MaxTableBytes {
		name := RoutesConfigPrefix + hash
		return []Object{configMap(name, "table.json", tableJSON)}, []string{name}, nil
	}
	parts, err := routing.Split(t, MaxTableBytes)
	if err != nil {
		var d diag.List
		d.Add(diag.Pos{}, "", "namespace %s: %v", ns, err)
		return nil, nil, d
	}
	var maps []Object
	var names []string
	for i, part := range parts {
		data, err := routing.Encode(part)
		if err != nil {
			return nil, nil, err
		}
		name := fmt.Sprintf("%s%s-%d", RoutesConfigPrefix, hash, i)
		maps = append(maps, configMap(name, routing.ShardFile(i), data))
		names = append(names, name)
	}
	return maps, names, nil
}

// mountParts makes the runtime in workload read the split table from the
// ConfigMaps names, projected into one directory.
func mountParts(workload []any, names []string) {
	for _, o := range workload {
		var pod *corev1.PodSpec
		switch w := o.(type) {
		case *appsv1.Deployment:
			pod = &w.Spec.Template.Spec
		case *appsv1.StatefulSet:
			pod = &w.Spec.Template.Spec
		default:
			continue
		}
		sources := make([]corev1.VolumeProjection, len(names))
		for i, n := range names {
			sources[i] = corev1.VolumeProjection{ConfigMap: &corev1.ConfigMapProjection{LocalObjectReference: corev1.LocalObjectReference{Name: n}}}
		}
		for i := range pod.Volumes {
			if pod.Volumes[i].Name == "routing" {
				pod.Volumes[i].VolumeSource = corev1.VolumeSource{Projected: &corev1.ProjectedVolumeSource{Sources: sources}}
			}
		}
		for i := range pod.Containers {
			args := pod.Containers[i].Args
			for j := 0; j+1 < len(args); j++ {
				if args[j] == "--table" {
					args[j+1] = TableDir
				}
			}
		}
	}
}

// contentHash is the first ten hex digits of data's SHA-256: enough to
// tell versions apart in an object's name.
func contentHash(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])[:10]
}

func mapBytes(m map[string]string) []byte {
	b, _ := json.Marshal(m) // sorted keys
	return b
}

// toObject converts a typed object to generic JSON, without the empty
// fields the typed structs always encode.
func toObject(v any) (Object, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encoding %T: %w", v, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var obj Object
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("decoding %T: %w", v, err)
	}
	prune(obj)
	return obj, nil
}

// prune removes null values and empty objects: creationTimestamp: null,
// status: {} and resources: {} say nothing.
func prune(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case map[string]any:
		for k, x := range v {
			if prune(x) {
				delete(v, k)
			}
		}
		return len(v) == 0
	case []any:
		for _, x := range v {
			prune(x)
		}
	}
	return false
}
