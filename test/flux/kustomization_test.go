package flux

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/fluxcd/cli-utils/pkg/kstatus/polling"
	"github.com/fluxcd/cli-utils/pkg/object"
	"github.com/fluxcd/pkg/apis/meta"
	fluxkustomize "github.com/fluxcd/pkg/kustomize"
	"github.com/fluxcd/pkg/ssa"
	ssautil "github.com/fluxcd/pkg/ssa/utils"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// fluxNamespace is where the Kustomizations live, as in a Flux install.
const fluxNamespace = "flux-system"

// kustomization is one Flux Kustomization, reconciled the way
// kustomize-controller v1.10 does in
// internal/controller/kustomization_controller.go (reconcile, apply, prune,
// checkHealth): build the path of the checkout, label the objects as its
// own, apply them in stages with force-ownership server-side apply
// (ssa.ResourceManager.ApplyAllStaged), delete what the previous revision
// applied and this one does not, then poll kstatus until the objects to
// check are Current or the timeout passes. Its Ready condition has the
// reasons and messages the controller writes.
type kustomization struct {
	name string
	path string
	// wait checks every applied object (spec.wait); healthChecks, only
	// the objects listed (spec.healthChecks).
	wait         bool
	healthChecks object.ObjMetadataSet
	timeout      time.Duration

	manager   *ssa.ResourceManager
	inventory object.ObjMetadataSet
	ready     metav1.Condition
}

func newKustomization(t testing.TB, cfg *rest.Config, name, path string) *kustomization {
	t.Helper()
	// kustomize-controller's client limits (--kube-api-qps, --kube-api-burst
	// defaults of fluxcd/pkg/runtime/client); client-go's own 5 per second
	// would starve the status poller.
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 50, 300
	c, err := client.New(cfg, client.Options{})
	if err != nil {
		t.Fatal(err)
	}
	poller := polling.NewStatusPoller(c, c.RESTMapper(), polling.Options{})
	manager := ssa.NewResourceManager(c, poller, ssa.Owner{Field: "kustomize-controller", Group: "kustomize.toolkit.fluxcd.io"})
	return &kustomization{name: name, path: path, timeout: time.Minute, manager: manager}
}

// reconcile applies the revision checked out in checkout and returns the
// Ready condition it leads to.
func (k *kustomization) reconcile(ctx context.Context, checkout, revision string) metav1.Condition {
	set := func(status metav1.ConditionStatus, reason, message string) metav1.Condition {
		k.ready = metav1.Condition{Type: meta.ReadyCondition, Status: status, Reason: reason, Message: message}
		return k.ready
	}
	objs, err := build(checkout, k.path)
	if err != nil {
		return set(metav1.ConditionFalse, meta.BuildFailedReason, err.Error())
	}
	k.manager.SetOwnerLabels(objs, k.name, fluxNamespace)
	if _, err := k.manager.ApplyAllStaged(ctx, objs, ssa.DefaultApplyOptions()); err != nil {
		return set(metav1.ConditionFalse, meta.ReconciliationFailedReason, err.Error())
	}
	applied := object.UnstructuredSetToObjMetadataSet(objs)
	if stale := k.inventory.Diff(applied); len(stale) > 0 {
		var gone []*unstructured.Unstructured
		for _, id := range stale {
			u := &unstructured.Unstructured{}
			u.SetGroupVersionKind(id.GroupKind.WithVersion(""))
			u.SetNamespace(id.Namespace)
			u.SetName(id.Name)
			gone = append(gone, u)
		}
		if err := k.fillVersions(gone); err != nil {
			return set(metav1.ConditionFalse, meta.PruneFailedReason, err.Error())
		}
		if _, err := k.manager.DeleteAll(ctx, gone, ssa.DefaultDeleteOptions()); err != nil {
			return set(metav1.ConditionFalse, meta.PruneFailedReason, err.Error())
		}
	}
	k.inventory = applied

	toCheck := k.healthChecks
	if k.wait {
		toCheck = applied
	}
	if err := k.manager.WaitForSetWithContext(ctx, toCheck, ssa.WaitOptions{Interval: time.Second, Timeout: k.timeout}); err != nil {
		return set(metav1.ConditionFalse, meta.HealthCheckFailedReason, err.Error())
	}
	return set(metav1.ConditionTrue, meta.ReconciliationSucceededReason, "Applied revision: "+revision)
}

// build runs kustomize on path inside the checkout root, confined to it,
// and reads the objects back from YAML, as kustomize-controller does.
func build(root, path string) ([]*unstructured.Unstructured, error) {
	m, err := fluxkustomize.SecureBuild(root, filepath.Join(root, filepath.FromSlash(path)), false)
	if err != nil {
		return nil, err
	}
	data, err := m.AsYaml()
	if err != nil {
		return nil, err
	}
	return ssautil.ReadObjects(bytes.NewReader(data))
}

// fillVersions gives each object its group's preferred version, which the
// inventory does not record (kustomize-controller's inventory stores it).
func (k *kustomization) fillVersions(objs []*unstructured.Unstructured) error {
	mapper := k.manager.Client().RESTMapper()
	for _, o := range objs {
		m, err := mapper.RESTMapping(o.GroupVersionKind().GroupKind())
		if err != nil {
			return err
		}
		o.SetGroupVersionKind(m.GroupVersionKind)
	}
	return nil
}
