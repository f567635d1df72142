package model

import (
	"bytes"
	"encoding/json"

	corev1 "k8s.io/api/core/v1"
)

// Validate checks one ContainerSource as Knative's admission does: the
// template decodes as a PodTemplateSpec with no field Kubernetes does not
// know, and it has at least one container, each with an image (a
// container without a name is named by Knative's defaulting).
func (c *ContainerSource) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &c.Metadata)
	validateSourceSpec(&errs, &c.Spec.SourceSpec, refContext{features: f})
	var pod corev1.PodTemplateSpec
	if c.Spec.Template != nil {
		raw, err := json.Marshal(c.Spec.Template)
		if err == nil {
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			err = dec.Decode(&pod)
		}
		if err != nil {
			errs.Add("spec.template", "is not a Kubernetes pod template: %v", err)
			return errs
		}
	}
	if len(pod.Spec.Containers) == 0 {
		errs.Add("spec.template.spec.containers", "is required: give the container that sends the events")
	}
	for i, ctr := range pod.Spec.Containers {
		if ctr.Image == "" {
			errs.Add("spec.template.spec.containers["+itoa(i)+"].image", "is required")
		}
	}
	if c.Status != nil {
		validateStatus(&errs, "status", &c.Status.Status)
	}
	return errs
}
