package check

import (
	"fmt"
	"strconv"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
)

// references checks that every reference resolves to an object in the set
// or to one knc.yaml declares external.
func (c *checker) references(set *model.Set) diag.List {
	external := map[model.Key]bool{}
	for _, e := range c.cfg.External {
		ns := e.Namespace
		if ns == "" && !clusterScoped[e.Kind] {
			ns = c.defaults.Namespace
		}
		external[model.Key{Group: model.Group(e.APIVersion), Kind: e.Kind, Namespace: ns, Name: e.Name}] = true
	}
	var diags diag.List
	resolve := func(entry *model.Entry, path string, key model.Key) {
		if _, ok := set.Index[key]; ok || external[key] {
			return
		}
		hint := ""
		if similar := similarName(set, key); similar != "" {
			hint = fmt.Sprintf("; did you mean %q?", similar)
		}
		diags.Add(entry.Doc.PosOf(path), path, "%s %q not found in namespace %q: define it in the repository, fix the reference, or declare it under external in knc.yaml%s", kindName(key), key.Name, key.Namespace, hint)
	}
	ref := func(entry *model.Entry, path string, r *model.KReference) {
		// An incomplete reference is already reported by validation.
		if r != nil && r.Kind != "" && r.Name != "" && r.APIVersion != "" {
			resolve(entry, path, model.Key{Group: model.Group(r.APIVersion), Kind: r.Kind, Namespace: r.Namespace, Name: r.Name})
		}
	}
	dest := func(entry *model.Entry, path string, d *model.Destination) {
		if d != nil {
			ref(entry, path+".ref", d.Ref)
		}
	}
	delivery := func(entry *model.Entry, path string, d *model.DeliverySpec) {
		if d != nil {
			dest(entry, path+".deadLetterSink", d.DeadLetterSink)
		}
	}
	for _, entry := range set.Entries {
		switch o := entry.Object.(type) {
		case *model.Broker:
			ref(entry, "spec.config", o.Spec.Config)
			delivery(entry, "spec.delivery", o.Spec.Delivery)
		case *model.Trigger:
			if o.Spec.Broker != "" {
				resolve(entry, "spec.broker", o.BrokerKey())
			}
			dest(entry, "spec.subscriber", &o.Spec.Subscriber)
			delivery(entry, "spec.delivery", o.Spec.Delivery)
		case *model.Channel:
			delivery(entry, "spec.delivery", o.Spec.Delivery)
		case *model.Subscription:
			if ch := o.Spec.Channel; ch.Kind != "" && ch.Name != "" && ch.APIVersion != "" {
				resolve(entry, "spec.channel", o.ChannelKey())
			}
			dest(entry, "spec.subscriber", o.Spec.Subscriber)
			dest(entry, "spec.reply", o.Spec.Reply)
			delivery(entry, "spec.delivery", o.Spec.Delivery)
		case *model.Sequence:
			for i := range o.Spec.Steps {
				p := "spec.steps[" + strconv.Itoa(i) + "]"
				dest(entry, p, &o.Spec.Steps[i].Destination)
				delivery(entry, p+".delivery", o.Spec.Steps[i].Delivery)
			}
			dest(entry, "spec.reply", o.Spec.Reply)
		case *model.Parallel:
			for i, b := range o.Spec.Branches {
				p := "spec.branches[" + strconv.Itoa(i) + "]"
				dest(entry, p+".filter", b.Filter)
				dest(entry, p+".subscriber", b.Subscriber)
				dest(entry, p+".reply", b.Reply)
				delivery(entry, p+".delivery", b.Delivery)
			}
			dest(entry, "spec.reply", o.Spec.Reply)
		case model.Source:
			dest(entry, "spec.sink", o.GetSourceSpec().Sink)
		}
		if entry.Duck != nil {
			dest(entry, "spec.sink", entry.Duck.Spec.Sink)
		}
	}
	return diags
}

func kindName(k model.Key) string {
	return knative.KindLabel(k.Group, k.Kind)
}
