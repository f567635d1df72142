package model

// Validate checks one Broker on its own. namespace is the namespace the
// Broker will live in, after defaulting.
func (b *Broker) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &b.Metadata)
	validateKeepDeadLettered(&errs, &b.Metadata)
	if class, ok := b.Metadata.Annotations[BrokerClassAnnotation]; ok && class == "" {
		errs.Add("metadata.annotations["+BrokerClassAnnotation+"]", "must not be empty; remove it to get knc's default class")
	}
	// Knative allows a Broker's references to other namespaces unless
	// config-br-defaults disallows it, which it does not by default.
	rc := refContext{features: f}
	if b.Spec.Config != nil {
		validateKReference(&errs, "spec.config", b.Spec.Config, rc)
	}
	if b.Spec.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", b.Spec.Delivery, rc)
	}
	if b.Status != nil {
		validateStatus(&errs, "status", &b.Status.Status)
	}
	return errs
}
