package diff

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/knc-dev/knc/compiler"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
)

// Immutable reports every change, between two revisions of the same
// object, to a field the Knative control-plane contract makes immutable: a
// Broker's class annotation and spec.config, a Trigger's spec.broker, a
// Channel's spec.channelTemplate and a Subscription's spec.channel. The
// API server rejects such an update, so the object has to be deleted and
// created again, which may lose the events in flight. Each diagnostic
// points at the new value.
//
// Values are compared after defaulting: writing out a default is no
// change. An object renamed is a new object, not a change.
func Immutable(base, head *model.Set) diag.List {
	var diags diag.List
	for _, he := range head.Entries {
		be, ok := base.Index[he.Key]
		if !ok || he.Object == nil || be.Object == nil {
			continue
		}
		report := func(path, what string, old, new any) {
			if reflect.DeepEqual(old, new) {
				return
			}
			diags.Add(he.Doc.PosOf(path), path,
				"%s %s/%s: %s is immutable, and this changes it from %s to %s; Knative rejects the update, so the %s must be deleted and re-created (events in flight may be lost), or created under a new name",
				he.Key.Kind, he.Key.Namespace, he.Key.Name, what, show(old), show(new), he.Key.Kind)
		}
		switch h := he.Object.(type) {
		case *model.Broker:
			b := be.Object.(*model.Broker)
			report(load.JoinKey("metadata.annotations", model.BrokerClassAnnotation), "the broker class annotation "+model.BrokerClassAnnotation, b.Class(), h.Class())
			report("spec.config", "spec.config", refOrNil(b.Spec.Config), refOrNil(h.Spec.Config))
		case *model.Trigger:
			b := be.Object.(*model.Trigger)
			report("spec.broker", "spec.broker", b.Spec.Broker, h.Spec.Broker)
		case *model.Channel:
			b := be.Object.(*model.Channel)
			report("spec.channelTemplate", "spec.channelTemplate", templateOrNil(b.Spec.ChannelTemplate), templateOrNil(h.Spec.ChannelTemplate))
		case *model.Subscription:
			b := be.Object.(*model.Subscription)
			report("spec.channel", "spec.channel", b.Spec.Channel, h.Spec.Channel)
		}
	}
	return diags.Sorted()
}

// show writes a value of an immutable field for a message.
func show(v any) string {
	switch v := v.(type) {
	case nil:
		return "nothing"
	case string:
		return fmt.Sprintf("%q", v)
	case model.KReference:
		if v.Namespace == "" {
			// A Subscription's channel, in the Subscription's namespace.
			return fmt.Sprintf("%s %s %s", v.APIVersion, v.Kind, v.Name)
		}
		return fmt.Sprintf("%s %s %s/%s", v.APIVersion, v.Kind, v.Namespace, v.Name)
	case model.ChannelTemplateSpec:
		s := v.APIVersion + " " + v.Kind
		if len(v.Spec) > 0 {
			spec, _ := json.Marshal(v.Spec)
			s += " with spec " + string(spec)
		}
		return s
	}
	return fmt.Sprint(v)
}

// refOrNil and templateOrNil turn a missing pointer into a nil interface,
// and a present one into its value, so that DeepEqual compares contents.
func refOrNil(r *model.KReference) any {
	if r == nil {
		return nil
	}
	return *r
}

func templateOrNil(t *model.ChannelTemplateSpec) any {
	if t == nil {
		return nil
	}
	c := *t
	if len(c.Spec) == 0 {
		c.Spec = nil
	}
	return c
}

// ImmutableUnits is Immutable for each deploy unit of head, against the
// unit of the same name at base, as knc diff --base pairs them; with one
// unit on each side, those two. Overlays may set an immutable field each
// their own way: comparing one overlay's object with another's would
// report a change that no cluster sees. A change in a file several
// overlays share is reported once.
func ImmutableUnits(base, head *compiler.Result) diag.List {
	var diags diag.List
	if len(base.Units) == 1 && len(head.Units) == 1 {
		return Immutable(base.Units[0].Set, head.Units[0].Set).Sorted()
	}
	byName := map[string]*compiler.Unit{}
	for _, u := range base.Units {
		byName[u.Name()] = u
	}
	for _, u := range head.Units {
		if b, ok := byName[u.Name()]; ok {
			diags = append(diags, Immutable(b.Set, u.Set)...)
		}
	}
	return diags.Sorted()
}
