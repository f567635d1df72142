package model

// Validate checks one Channel on its own.
func (c *Channel) Validate(f Features) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &c.Metadata)
	if t := c.Spec.ChannelTemplate; t != nil {
		if t.APIVersion == "" {
			errs.Add("spec.channelTemplate.apiVersion", "must not be empty")
		}
		if t.Kind == "" {
			errs.Add("spec.channelTemplate.kind", "must not be empty")
		}
	}
	for i := range c.Spec.Subscribers {
		s := &c.Spec.Subscribers[i]
		p := "spec.subscribers[" + itoa(i) + "]"
		if s.Generation < 0 {
			errs.Add(p+".generation", "must not be negative")
		}
		if s.Delivery != nil {
			validateDelivery(&errs, p+".delivery", s.Delivery, f)
		}
	}
	if c.Spec.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", c.Spec.Delivery, f)
	}
	if c.Status != nil {
		validateStatus(&errs, "status", &c.Status.Status)
		for i, s := range c.Status.Subscribers {
			switch s.Ready {
			case "True", "False", "Unknown":
			default:
				errs.Add("status.subscribers["+itoa(i)+"].ready", "must be \"True\", \"False\" or \"Unknown\", not %q", s.Ready)
			}
		}
	}
	return errs
}
