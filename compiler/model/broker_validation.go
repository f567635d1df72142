package model

// Validate checks one Broker on its own.
func (b *Broker) Validate(f Features) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &b.Metadata)
	if class, ok := b.Metadata.Annotations[BrokerClassAnnotation]; ok && class == "" {
		errs.Add("metadata.annotations["+BrokerClassAnnotation+"]", "must not be empty; remove it to get knc's default class")
	}
	if b.Spec.Config != nil {
		validateKReference(&errs, "spec.config", b.Spec.Config)
	}
	if b.Spec.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", b.Spec.Delivery, f)
	}
	if b.Status != nil {
		validateStatus(&errs, "status", &b.Status.Status)
	}
	return errs
}
