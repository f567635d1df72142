package model

// Validate checks one Subscription on its own.
func (s *Subscription) Validate(f Features) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &s.Metadata)
	validateKReference(&errs, "spec.channel", &s.Spec.Channel)
	if s.Spec.Subscriber == nil && s.Spec.Reply == nil {
		errs.Add("spec", "needs a subscriber, a reply, or both")
	}
	if s.Spec.Subscriber != nil {
		validateDestination(&errs, "spec.subscriber", s.Spec.Subscriber)
	}
	if s.Spec.Reply != nil {
		validateDestination(&errs, "spec.reply", s.Spec.Reply)
	}
	if s.Spec.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", s.Spec.Delivery, f)
	}
	if s.Status != nil {
		validateStatus(&errs, "status", &s.Status.Status)
	}
	return errs
}
