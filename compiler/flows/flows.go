package flows

import (
	"maps"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
)

// Generated is what one Sequence or Parallel compiles into.
type Generated struct {
	Channels      []*model.Channel      `json:"channels,omitempty"`
	Subscriptions []*model.Subscription `json:"subscriptions,omitempty"`
}

// Of returns what o compiles into, and whether o is a Sequence or a
// Parallel.
func Of(o model.Object) (Generated, bool) {
	switch o := o.(type) {
	case *model.Sequence:
		return Sequence(o), true
	case *model.Parallel:
		return Parallel(o), true
	}
	return Generated{}, false
}

// IngressChannel names the Channel whose address is a Sequence's or a
// Parallel's: a Sequence's first step's, a Parallel's ingress.
func IngressChannel(o model.Object) (string, bool) {
	switch o := o.(type) {
	case *model.Sequence:
		return SequenceChannelName(o.Metadata.Name, 0), true
	case *model.Parallel:
		return ParallelChannelName(o.Metadata.Name), true
	}
	return "", false
}

// Expand adds to set the Channels and Subscriptions of each of its
// Sequences and Parallels, each entry naming its owner. An object the
// repository defines under a name a flow's controller would take is an
// error: Knative's controller would refuse to adopt it, and knc would
// route two objects under one name. The exception is the flow's own
// object as knc build wrote it, its spec-hash annotation that of the
// spec the flow makes: the output of a build, read back (by knc validate
// in CI, say), is the flow's and is taken as generated.
func Expand(set *model.Set) diag.List {
	var diags diag.List
	owners := make([]*model.Entry, 0, len(set.Sequences)+len(set.Parallels))
	for _, e := range set.Entries {
		switch e.Object.(type) {
		case *model.Sequence, *model.Parallel:
			owners = append(owners, e)
		}
	}
	for _, owner := range owners {
		g, _ := Of(owner.Object)
		objects := make([]model.Object, 0, len(g.Channels)+len(g.Subscriptions))
		for _, c := range g.Channels {
			objects = append(objects, c)
		}
		for _, s := range g.Subscriptions {
			objects = append(objects, s)
		}
		for _, o := range objects {
			key := model.KeyOf(o)
			if other, ok := set.Index[key]; ok {
				if other.Owner == nil && builtBy(other.Object, o) {
					other.Owner = owner
					continue
				}
				at := "at " + other.Doc.PosOf("").String()
				if other.Owner != nil {
					at = "by " + other.Owner.Key.String()
				}
				diags.Add(owner.Doc.PosOf("metadata.name"), "metadata.name",
					"%s compiles into %s, which is also defined %s: rename one of them", owner.Key, key, at)
				continue
			}
			e := &model.Entry{Key: key, Doc: owner.Doc, Object: o, Owner: owner}
			set.Index[key] = e
			set.Entries = append(set.Entries, e)
			switch o := o.(type) {
			case *model.Channel:
				set.Channels = append(set.Channels, o)
			case *model.Subscription:
				set.Subscriptions = append(set.Subscriptions, o)
			}
		}
	}
	return diags
}

// builtBy reports whether defined is generated as knc build writes it:
// the annotation knc build sets holds the hash of the spec generated has.
func builtBy(defined, generated model.Object) bool {
	hash, ok := defined.GetMetadata().Annotations[model.SpecHashAnnotation]
	return ok && hash == model.SpecHash(model.Spec(generated)) && model.SpecHash(model.Spec(defined)) == hash
}

// newChannel returns a Channel of the flow's channel template, knc's
// default channel class when it has none.
func newChannel(namespace, name string, template *model.ChannelTemplateSpec) *model.Channel {
	c := &model.Channel{
		TypeMeta: model.TypeMeta{APIVersion: knative.MessagingV1, Kind: knative.KindChannel},
		Metadata: model.ObjectMeta{Name: name, Namespace: namespace},
	}
	if template != nil {
		c.Spec.ChannelTemplate = &model.ChannelTemplateSpec{APIVersion: template.APIVersion, Kind: template.Kind, Spec: cloneMap(template.Spec)}
	}
	c.SetDefaults(model.Defaults{Namespace: namespace})
	return c
}

// newSubscription returns a Subscription of the Channel named channel.
// Like Knative's, its spec.channel names no namespace: the Channel is in
// the Subscription's.
func newSubscription(namespace, name, channel string) *model.Subscription {
	return &model.Subscription{
		TypeMeta: model.TypeMeta{APIVersion: knative.MessagingV1, Kind: knative.KindSubscription},
		Metadata: model.ObjectMeta{Name: name, Namespace: namespace},
		Spec: model.SubscriptionSpec{
			Channel: model.KReference{APIVersion: knative.MessagingV1, Kind: knative.KindChannel, Name: channel},
		},
	}
}

// channelDestination is a destination that names a generated Channel, with
// its namespace, as Knative's controllers write the replies and the
// subscribers that are Channels.
func channelDestination(namespace, name string) *model.Destination {
	return &model.Destination{Ref: &model.KReference{APIVersion: knative.MessagingV1, Kind: knative.KindChannel, Name: name, Namespace: namespace}}
}

// cloneDestination copies d, so that a generated object shares nothing
// with the flow it came from.
func cloneDestination(d *model.Destination) *model.Destination {
	if d == nil {
		return nil
	}
	out := &model.Destination{URI: cloneString(d.URI), CACerts: cloneString(d.CACerts), Audience: cloneString(d.Audience)}
	if d.Ref != nil {
		r := *d.Ref
		r.Address = cloneString(d.Ref.Address)
		out.Ref = &r
	}
	return out
}

func cloneDelivery(d *model.DeliverySpec) *model.DeliverySpec {
	if d == nil {
		return nil
	}
	out := &model.DeliverySpec{
		DeadLetterSink: cloneDestination(d.DeadLetterSink),
		BackoffPolicy:  cloneString(d.BackoffPolicy),
		BackoffDelay:   cloneString(d.BackoffDelay),
		Timeout:        cloneString(d.Timeout),
		RetryAfterMax:  cloneString(d.RetryAfterMax),
		Format:         cloneString(d.Format),
	}
	if d.Retry != nil {
		r := *d.Retry
		out.Retry = &r
	}
	return out
}

func cloneString(s *string) *string {
	if s == nil {
		return nil
	}
	c := *s
	return &c
}

// cloneMap copies a channel template's free-form spec, nested maps and
// lists included.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = cloneValue(v)
	}
	return out
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return cloneMap(v)
	case []any:
		out := make([]any, len(v))
		for i := range v {
			out[i] = cloneValue(v[i])
		}
		return out
	}
	return v
}
