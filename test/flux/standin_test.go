package flux

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/knc-dev/knc/test/rig"
)

var (
	deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	pvcs        = schema.GroupVersionResource{Version: "v1", Resource: "persistentvolumeclaims"}
	configMaps  = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
)

// nodeStandIn does, for the runtime's Deployment in one namespace, what
// the kubelet and the controller manager would: it mounts the routing
// ConfigMap the pod template names into table, binds the volume claim, and,
// once the runtime serves (up), reports the Deployment rolled out for its
// generation.
type nodeStandIn struct {
	dyn     dynamic.Interface
	ns      string
	table   *rig.MountedTable
	mounted string
	up      atomic.Bool
	// mounts counts the tables mounted; reloads, set before up, counts
	// those the runtime reloaded after its first. A new pod is ready once
	// it serves the table it mounted, so the Deployment is reported rolled
	// out only when the runtime has loaded the newest one.
	mounts  atomic.Int64
	reloads func() int
	// lastErr is the last error of a step, for the log of a failed test;
	// most are transient (a ConfigMap not applied yet).
	lastErr atomic.Value
}

// run repeats step until ctx ends.
func (s *nodeStandIn) run(ctx context.Context) {
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		if err := s.step(ctx); err != nil && ctx.Err() == nil {
			s.lastErr.Store(err.Error())
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

func (s *nodeStandIn) step(ctx context.Context) error {
	d, err := s.dyn.Resource(deployments).Namespace(s.ns).Get(ctx, "knc-runtime", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	name := routingConfigMap(d)
	if name == "" {
		return fmt.Errorf("the runtime Deployment of %s mounts no routing ConfigMap", s.ns)
	}
	if name != s.mounted {
		cm, err := s.dyn.Resource(configMaps).Namespace(s.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err // not applied yet: the kubelet waits too
		}
		data, _, _ := unstructured.NestedString(cm.Object, "data", "table.json")
		if err := s.table.Update([]byte(data)); err != nil {
			return err
		}
		s.mounted = name
		s.mounts.Add(1)
	}
	if err := s.bindClaim(ctx); err != nil {
		return err
	}
	og, _, _ := unstructured.NestedInt64(d.Object, "status", "observedGeneration")
	if !s.up.Load() || og == d.GetGeneration() || int64(s.reloads()) < s.mounts.Load()-1 {
		return nil
	}
	// What the deployment controller reports once the one replica of the
	// new template is ready (kstatus reads these fields).
	now := time.Now().UTC().Format(time.RFC3339)
	d.Object["status"] = map[string]any{
		"observedGeneration": d.GetGeneration(),
		"replicas":           int64(1), "updatedReplicas": int64(1), "readyReplicas": int64(1), "availableReplicas": int64(1),
		"conditions": []any{
			map[string]any{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable", "lastUpdateTime": now, "lastTransitionTime": now},
			map[string]any{"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable", "lastUpdateTime": now, "lastTransitionTime": now},
		},
	}
	_, err = s.dyn.Resource(deployments).Namespace(s.ns).UpdateStatus(ctx, d, metav1.UpdateOptions{})
	return err
}

func (s *nodeStandIn) bindClaim(ctx context.Context) error {
	pvc, err := s.dyn.Resource(pvcs).Namespace(s.ns).Get(ctx, "knc-runtime-data", metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return err
	}
	if phase, _, _ := unstructured.NestedString(pvc.Object, "status", "phase"); phase == "Bound" {
		return nil
	}
	_ = unstructured.SetNestedField(pvc.Object, "Bound", "status", "phase")
	_, err = s.dyn.Resource(pvcs).Namespace(s.ns).UpdateStatus(ctx, pvc, metav1.UpdateOptions{})
	return err
}

// routingConfigMap is the ConfigMap the Deployment mounts as its routing
// table.
func routingConfigMap(d *unstructured.Unstructured) string {
	volumes, _, _ := unstructured.NestedSlice(d.Object, "spec", "template", "spec", "volumes")
	for _, v := range volumes {
		m, _ := v.(map[string]any)
		if m["name"] == "routing" {
			name, _, _ := unstructured.NestedString(m, "configMap", "name")
			return name
		}
	}
	return ""
}
