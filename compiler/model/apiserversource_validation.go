package model

import (
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Validate checks one ApiServerSource as Knative's admission does, after
// its defaulting (an empty mode is Reference).
func (a *ApiServerSource) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &a.Metadata)
	s := &a.Spec
	switch s.Mode {
	case "", APIServerModeReference, APIServerModeResource:
	default:
		errs.Add("spec.mode", "must be %q or %q, not %q", APIServerModeReference, APIServerModeResource, s.Mode)
	}
	validateSourceSpec(&errs, &s.SourceSpec, refContext{features: f})
	if len(s.Resources) == 0 {
		errs.Add("spec.resources", "is required: list the kinds to watch, such as {apiVersion: v1, kind: Event}")
	}
	for i, r := range s.Resources {
		validateAPIVersionKind(&errs, "spec.resources["+itoa(i)+"]", r.APIVersion, r.Kind)
	}
	if s.Owner != nil {
		validateAPIVersionKind(&errs, "spec.owner", s.Owner.APIVersion, s.Owner.Kind)
	}
	if len(s.Filters) > 0 && f.require(&errs, "spec.filters", FeatureNewAPIServerSourceFilters) {
		for i := range s.Filters {
			validateFilter(&errs, "spec.filters["+itoa(i)+"]", &s.Filters[i])
		}
	}
	if a.Status != nil {
		validateStatus(&errs, "status", &a.Status.Status)
	}
	return errs
}

// validateAPIVersionKind checks a kind as Knative's ApiServerSource
// validation does: an apiVersion Kubernetes can parse as group/version
// (empty included), and a kind that is not blank.
func validateAPIVersionKind(errs *FieldErrors, path, apiVersion, kind string) {
	if _, err := schema.ParseGroupVersion(apiVersion); err != nil {
		errs.Add(path+".apiVersion", "%q is not an API version such as v1 or apps/v1: %v", apiVersion, err)
	}
	if strings.TrimSpace(kind) == "" {
		errs.Add(path+".kind", "is required: name the kind, such as Pod")
	}
}
