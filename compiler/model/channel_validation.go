package model

// Validate checks one Channel on its own. namespace is the namespace the
// Channel will live in, after defaulting.
func (c *Channel) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &c.Metadata)
	validateKeepDeadLettered(&errs, &c.Metadata)
	if t := c.Spec.ChannelTemplate; t != nil {
		if t.APIVersion == "" {
			errs.Add("spec.channelTemplate.apiVersion", "must not be empty")
		}
		if t.Kind == "" {
			errs.Add("spec.channelTemplate.kind", "must not be empty")
		}
	}
	if len(c.Spec.Subscribers) > 0 {
		errs.Add("spec.subscribers", "is written by the Channel's controller from its Subscriptions; Knative refuses it in a manifest: write a Subscription per subscriber instead")
	}
	// Knative validates a Channel within its own namespace: a dead-letter
	// sink ref in another namespace is refused.
	rc := refContext{features: f, parentNamespace: namespace}
	if c.Spec.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", c.Spec.Delivery, rc)
	}
	if c.Status != nil {
		validateStatus(&errs, "status", &c.Status.Status)
		for i, s := range c.Status.Subscribers {
			switch s.Ready {
			case "True", "False", "Unknown":
			default:
				errs.Warn("status.subscribers["+itoa(i)+"].ready", "must be \"True\", \"False\" or \"Unknown\", not %q", s.Ready)
			}
		}
	}
	return errs
}
