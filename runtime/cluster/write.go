package cluster

import (
	"context"
	"fmt"
	"reflect"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"

	"github.com/knc-dev/knc/runtime/cluster/statuspatch"
)

// FieldOwner is the field manager of the runtime's status writes.
const FieldOwner = "knc-runtime"

// statusWriter writes desired statuses through the /status subresource
// with package statuspatch, which keeps the semantics of Flux's patch
// helper: the conditions knc owns win over another writer's,
// observedGeneration is the live metadata.generation, and nothing outside
// status is ever sent.
type statusWriter struct {
	client dynamic.Interface
}

// write patches the status of d.live when it differs from d, and reports
// whether it did.
func (w *statusWriter) write(ctx context.Context, d desiredStatus) (bool, error) {
	resource, err := resourceOf(d.kind)
	if err != nil {
		return false, err
	}
	before, err := fromUnstructured(d.kind, d.live)
	if err != nil {
		return false, err
	}
	obj := before.DeepCopyObject().(*LiveObject)
	apply(obj, d)
	if reflect.DeepEqual(before.Status, obj.Status) && obj.Status.ObservedGeneration == obj.Generation {
		return false, nil
	}
	err = statuspatch.Patch(ctx, w.client.Resource(resource).Namespace(obj.Namespace), before, obj, statuspatch.Options{
		FieldManager:    FieldOwner,
		OwnedConditions: ownedConditions,
	})
	if err != nil {
		return false, fmt.Errorf("patching the status of %s %s/%s: %w", d.kind, obj.Namespace, obj.Name, err)
	}
	return true, nil
}

// apply sets d's conditions and fields on obj. Conditions go through
// statuspatch.Set, which keeps lastTransitionTime while a condition's
// state is unchanged; knc-owned conditions d no longer has are removed,
// others' are kept.
func apply(obj *LiveObject, d desiredStatus) {
	want := map[string]bool{}
	for _, c := range d.status.Conditions {
		want[c.Type] = true
		statuspatch.Set(obj, &metav1.Condition{
			Type:    c.Type,
			Status:  metav1.ConditionStatus(c.Status),
			Reason:  c.Reason,
			Message: c.Message,
		})
	}
	for _, t := range ownedConditions {
		if !want[t] && statuspatch.Has(obj, t) {
			statuspatch.Delete(obj, t)
		}
	}
	s := &obj.Status
	s.Address = nil
	if d.status.Address != nil {
		s.Address = &Addressable{URL: d.status.Address.URL}
	}
	s.SubscriberURI = d.status.SubscriberURI
	s.DeadLetterSinkURI = d.status.DeadLetterSinkURI
	s.PhysicalSubscription = nil
	if p := d.status.PhysicalSubscription; p != nil {
		ps := *p
		s.PhysicalSubscription = &ps
	}
	s.Subscribers = slices.Clone(d.status.Subscribers)
	s.SinkURI = d.status.SinkURI
	s.CloudEventAttributes = slices.Clone(d.status.CloudEventAttributes)
	s.Channel = d.channel
	s.ChannelStatuses = slices.Clone(d.status.ChannelStatuses)
	s.SubscriptionStatuses = slices.Clone(d.status.SubscriptionStatuses)
	s.BranchStatuses = slices.Clone(d.status.BranchStatuses)
	s.IngressChannelStatus = nil
	if c := d.status.IngressChannelStatus; c != nil {
		cs := *c
		s.IngressChannelStatus = &cs
	}
}
