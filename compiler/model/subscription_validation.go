package model

// Validate checks one Subscription on its own. namespace is the namespace
// the Subscription will live in, after defaulting.
func (s *Subscription) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &s.Metadata)
	validateKeepDeadLettered(&errs, &s.Metadata)
	rc := refContext{features: f}
	if s.Spec.Channel == (KReference{}) {
		errs.Add("spec.channel", "must reference a Channel: give its apiVersion, kind and name")
	} else {
		validateKReference(&errs, "spec.channel", &s.Spec.Channel, rc)
		// Knative refuses any namespace here while the feature is off,
		// the Subscription's own included: defaulting leaves the field
		// empty, and the Channel is looked up in the Subscription's
		// namespace.
		switch ns := s.Spec.Channel.Namespace; {
		case ns == "" || f[FeatureCrossNamespaceEventLinks]:
		case ns == namespace:
			errs.Add("spec.channel.namespace", "needs the %q feature, which is disabled, even when it names the Subscription's own namespace; remove it: the Channel is looked up in namespace %q without it", FeatureCrossNamespaceEventLinks, namespace)
		default:
			f.require(&errs, "spec.channel.namespace", FeatureCrossNamespaceEventLinks)
		}
	}
	if destinationEmpty(s.Spec.Subscriber) {
		errs.Add("spec.subscriber", "is required: Knative has refused a Subscription without a subscriber since 1.9; give a ref or a uri")
	} else {
		validateDestination(&errs, "spec.subscriber", s.Spec.Subscriber, rc)
	}
	if !destinationEmpty(s.Spec.Reply) {
		validateDestination(&errs, "spec.reply", s.Spec.Reply, rc)
	} else if s.Spec.Reply != nil {
		errs.Warn("spec.reply", "is empty, so replies are dropped; remove it, or give a ref or a uri")
	}
	if s.Spec.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", s.Spec.Delivery, rc)
	}
	if s.Status != nil {
		validateStatus(&errs, "status", &s.Status.Status)
	}
	return errs
}

// destinationEmpty is Knative's test for a subscriber or reply that is
// missing: absent, or present with no field set.
func destinationEmpty(d *Destination) bool {
	return d == nil || d.Ref == nil && d.URI == nil && d.CACerts == nil && d.Audience == nil
}
