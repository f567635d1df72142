package model

// Defaults are the project-wide values defaulting fills in.
type Defaults struct {
	// Namespace is the namespace of objects that name none.
	Namespace string
}

// knc's own implementations, the defaults for a Broker's class and a
// Channel's template.
const (
	BrokerClassKnc = "knc"

	ChannelAPIVersionKnc = "messaging.knc.dev/v1alpha1"
	ChannelKindKnc       = "JetStreamChannel"
)

func defaultNamespace(m *ObjectMeta, d Defaults) {
	if m.Namespace == "" {
		m.Namespace = d.Namespace
	}
}

func defaultRef(r *KReference, ns string) {
	if r != nil && r.Namespace == "" {
		r.Namespace = ns
	}
}

func defaultDestination(dst *Destination, ns string) {
	if dst != nil {
		defaultRef(dst.Ref, ns)
	}
}

func defaultDelivery(d *DeliverySpec, ns string) {
	if d != nil {
		defaultDestination(d.DeadLetterSink, ns)
	}
}

// SetDefaults fills in the namespace, the class annotation and the
// namespaces of references.
func (b *Broker) SetDefaults(d Defaults) {
	defaultNamespace(&b.Metadata, d)
	if b.Metadata.Annotations == nil {
		b.Metadata.Annotations = map[string]string{}
	}
	if b.Metadata.Annotations[BrokerClassAnnotation] == "" {
		b.Metadata.Annotations[BrokerClassAnnotation] = BrokerClassKnc
	}
	defaultRef(b.Spec.Config, b.Metadata.Namespace)
	defaultDelivery(b.Spec.Delivery, b.Metadata.Namespace)
}

// Class returns the Broker's class annotation.
func (b *Broker) Class() string { return b.Metadata.Annotations[BrokerClassAnnotation] }

// SetDefaults fills in the namespace and the namespaces of references.
func (t *Trigger) SetDefaults(d Defaults) {
	defaultNamespace(&t.Metadata, d)
	defaultDestination(&t.Spec.Subscriber, t.Metadata.Namespace)
	defaultDelivery(t.Spec.Delivery, t.Metadata.Namespace)
}

// SetDefaults fills in the namespace, the channel template and the
// namespaces of references.
func (c *Channel) SetDefaults(d Defaults) {
	defaultNamespace(&c.Metadata, d)
	if c.Spec.ChannelTemplate == nil {
		c.Spec.ChannelTemplate = &ChannelTemplateSpec{APIVersion: ChannelAPIVersionKnc, Kind: ChannelKindKnc}
	}
	defaultDelivery(c.Spec.Delivery, c.Metadata.Namespace)
}

// SetDefaults fills in the namespace and the namespaces of the
// destinations. spec.channel.namespace stays as written, as Knative's
// defaulting leaves it: a cluster without cross-namespace links refuses
// the field, so knc build must not write it. ChannelKey resolves it.
func (s *Subscription) SetDefaults(d Defaults) {
	defaultNamespace(&s.Metadata, d)
	defaultDestination(s.Spec.Subscriber, s.Metadata.Namespace)
	defaultDestination(s.Spec.Reply, s.Metadata.Namespace)
	defaultDelivery(s.Spec.Delivery, s.Metadata.Namespace)
}
