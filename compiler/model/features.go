package model

// Feature names, as in Knative's config-features ConfigMap.
const (
	FeatureNewTriggerFilters  = "new-trigger-filters"
	FeatureDeliveryTimeout    = "delivery-timeout"
	FeatureDeliveryRetryAfter = "delivery-retryafter"
)

// Features says which optional API fields a cluster accepts.
type Features map[string]bool

// DefaultFeatures are what current Knative enables by default.
func DefaultFeatures() Features {
	return Features{
		FeatureNewTriggerFilters:  true,
		FeatureDeliveryTimeout:    true,
		FeatureDeliveryRetryAfter: false,
	}
}

func (f Features) require(errs *FieldErrors, path, feature string) {
	if !f[feature] {
		errs.Add(path, "needs the %q feature, which is disabled; enable it under features in knc.yaml if the cluster's config-features ConfigMap enables it, or remove the field", feature)
	}
}
