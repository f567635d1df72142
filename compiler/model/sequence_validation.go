package model

// Validate checks one Sequence as Knative's admission does, after its
// defaulting (an absent channel template is the cluster's default).
func (s *Sequence) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &s.Metadata)
	rc := refContext{features: f}
	if len(s.Spec.Steps) == 0 {
		errs.Add("spec.steps", "is required: give at least one step")
	}
	for i := range s.Spec.Steps {
		p := "spec.steps[" + itoa(i) + "]"
		validateDestination(&errs, p, &s.Spec.Steps[i].Destination, rc)
		if d := s.Spec.Steps[i].Delivery; d != nil {
			validateDelivery(&errs, p+".delivery", d, rc)
		}
	}
	validateFlowChannelTemplate(&errs, s.Spec.ChannelTemplate)
	if s.Spec.Reply != nil {
		validateDestination(&errs, "spec.reply", s.Spec.Reply, rc)
	}
	if s.Status != nil {
		validateStatus(&errs, "status", &s.Status.Status)
	}
	return errs
}

// validateFlowChannelTemplate checks the channel template of a Sequence or
// Parallel that gives one: it names a kind.
func validateFlowChannelTemplate(errs *FieldErrors, t *ChannelTemplateSpec) {
	if t == nil {
		return
	}
	if t.APIVersion == "" {
		errs.Add("spec.channelTemplate.apiVersion", "is required, such as messaging.knative.dev/v1; or remove the channelTemplate for the cluster's default channel")
	}
	if t.Kind == "" {
		errs.Add("spec.channelTemplate.kind", "is required, such as InMemoryChannel; or remove the channelTemplate for the cluster's default channel")
	}
}
