package statuspatch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"time"

	jsonpatch "github.com/evanphx/json-patch/v5"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
)

// Object is an object whose status Patch writes.
type Object interface {
	runtime.Object
	metav1.Object
	Getter
	SetConditions([]metav1.Condition)
}

// Options configure Patch.
type Options struct {
	// FieldManager names the writer in the object's managedFields.
	FieldManager string
	// OwnedConditions are the condition types whose value the writer
	// imposes on a conflict with another writer.
	OwnedConditions []string
}

// conflictBackoff is how often, and after how long, the condition patch
// is tried again when the object changed since it was read: Flux's, which
// is the Kubernetes controllers' retry of a conflicting update.
var conflictBackoff = wait.Backoff{Steps: 5, Duration: 100 * time.Millisecond, Jitter: 1.0}

// Patch writes the change from before, the object as it was read, to
// after, the same object with the status the caller wants, through
// client (the object's resource, in its namespace). It first sets
// after's status.observedGeneration to its metadata.generation.
func Patch(ctx context.Context, client dynamic.ResourceInterface, before, after Object, opts Options) error {
	afterMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(after)
	if err != nil {
		return err
	}
	if _, ok := afterMap["status"]; ok {
		if err := unstructured.SetNestedField(afterMap, after.GetGeneration(), "status", "observedGeneration"); err != nil {
			return err
		}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(afterMap, after); err != nil {
			return err
		}
	}
	beforeMap, err := runtime.DefaultUnstructuredConverter.ToUnstructured(before)
	if err != nil {
		return err
	}
	changed, err := statusChanged(before, after)
	if err != nil {
		return err
	}
	// The conditions go first: their patch carries the resourceVersion,
	// which the other patch would change.
	return errors.Join(
		patchConditions(ctx, client, before, after, opts),
		patchStatus(ctx, client, before, beforeMap, afterMap, changed, opts),
	)
}

// statusChanged reports whether a merge patch from before to after
// touches status.
func statusChanged(before, after Object) (bool, error) {
	p, err := mergePatch(before, after)
	if err != nil {
		return false, err
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(p, &fields); err != nil {
		return false, err
	}
	_, ok := fields["status"]
	return ok, nil
}

// patchConditions sends the change of the conditions from before to
// after, merged onto the latest object, until it is not refused for a
// conflict.
func patchConditions(ctx context.Context, client dynamic.ResourceInterface, before, after Object, opts Options) error {
	changes := diff(before, after)
	if len(changes) == 0 {
		return nil
	}
	return wait.ExponentialBackoffWithContext(ctx, conflictBackoff, func(ctx context.Context) (bool, error) {
		u, err := client.Get(ctx, before.GetName(), metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		latest, err := decodeLike(before, u)
		if err != nil {
			return false, err
		}
		read := latest.DeepCopyObject().(Object)
		if err := apply(changes, latest, opts.OwnedConditions); err != nil {
			return false, fmt.Errorf("patching the conditions of %s: %w", before.GetName(), err)
		}
		// The lock: the patch applies only to the version it was
		// merged onto.
		read.SetResourceVersion("")
		latest.SetResourceVersion(u.GetResourceVersion())
		p, err := mergePatch(read, latest)
		if err != nil {
			return false, err
		}
		_, err = client.Patch(ctx, before.GetName(), types.MergePatchType, p, metav1.PatchOptions{FieldManager: opts.FieldManager}, "status")
		switch {
		case apierrors.IsConflict(err):
			return false, nil
		case err != nil:
			return false, err
		}
		return true, nil
	})
}

// patchStatus sends the change of the status but its conditions, not
// locked: it touches only the fields the writer changed.
func patchStatus(ctx context.Context, client dynamic.ResourceInterface, before Object, beforeMap, afterMap map[string]any, changed bool, opts Options) error {
	if !changed {
		return nil
	}
	from, err := statusOnly(before, beforeMap)
	if err != nil {
		return err
	}
	to, err := statusOnly(before, afterMap)
	if err != nil {
		return err
	}
	p, err := mergePatch(from, to)
	if err != nil {
		return err
	}
	if string(p) == "{}" {
		return nil
	}
	_, err = client.Patch(ctx, before.GetName(), types.MergePatchType, p, metav1.PatchOptions{FieldManager: opts.FieldManager}, "status")
	return err
}

// statusOnly returns the object of m with its identity, metadata and
// status but for the conditions, typed like like.
func statusOnly(like Object, m map[string]any) (Object, error) {
	kept := make(map[string]any, len(m))
	for _, k := range []string{"apiVersion", "kind", "metadata", "status"} {
		if v, ok := m[k]; ok {
			kept[k] = v
		}
	}
	if status, ok := kept["status"].(map[string]any); ok {
		s := make(map[string]any, len(status))
		for k, v := range status {
			if k != "conditions" {
				s[k] = v
			}
		}
		kept["status"] = s
	}
	return decodeLike(like, &unstructured.Unstructured{Object: kept})
}

// decodeLike returns u as a new object of like's type.
func decodeLike(like Object, u *unstructured.Unstructured) (Object, error) {
	out := like.DeepCopyObject().(Object)
	reflect.ValueOf(out).Elem().SetZero()
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, out); err != nil {
		return nil, fmt.Errorf("reading %s: %w", u.GetName(), err)
	}
	return out, nil
}

// mergePatch returns the JSON merge patch from a to b.
func mergePatch(a, b Object) ([]byte, error) {
	aj, err := json.Marshal(a)
	if err != nil {
		return nil, err
	}
	bj, err := json.Marshal(b)
	if err != nil {
		return nil, err
	}
	return jsonpatch.CreateMergePatch(aj, bj)
}
