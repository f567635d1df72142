package model

// Feature names, as in Knative's config-features ConfigMap. Only the flags
// that change what Knative's admission accepts for the kinds knc checks are here;
// #Features in schema/config.cue lists them all, with their defaults.
const (
	// FeatureNewTriggerFilters gates spec.filters. Knative made the field
	// GA and dropped the flag; disabling it describes an older cluster.
	FeatureNewTriggerFilters = "new-trigger-filters"
	// FeatureDeliveryTimeout allows delivery.timeout.
	FeatureDeliveryTimeout = "delivery-timeout"
	// FeatureDeliveryRetryAfter allows delivery.retryAfterMax.
	FeatureDeliveryRetryAfter = "delivery-retryafter"
	// FeatureCrossNamespaceEventLinks allows a Subscription's
	// spec.channel.namespace and a Trigger's spec.brokerRef.namespace.
	FeatureCrossNamespaceEventLinks = "cross-namespace-event-links"
	// FeatureKReferenceGroup allows group in place of apiVersion in a
	// reference.
	FeatureKReferenceGroup = "kreference-group"
	// FeatureNewAPIServerSourceFilters allows an ApiServerSource's
	// spec.filters.
	FeatureNewAPIServerSourceFilters = "new-apiserversource-filters"
)

// FeatureNames lists every feature, sorted.
var FeatureNames = []string{
	FeatureCrossNamespaceEventLinks,
	FeatureDeliveryRetryAfter,
	FeatureDeliveryTimeout,
	FeatureKReferenceGroup,
	FeatureNewAPIServerSourceFilters,
	FeatureNewTriggerFilters,
}

// Features says which optional API fields a cluster accepts.
type Features map[string]bool

// AllFeatures enables every feature.
func AllFeatures() Features {
	f := Features{}
	for _, n := range FeatureNames {
		f[n] = true
	}
	return f
}

func (f Features) require(errs *FieldErrors, path, feature string) bool {
	if !f[feature] {
		errs.Add(path, "needs the %q feature, which is disabled; enable it under features in knc.yaml if the cluster's config-features ConfigMap enables it, or remove the field", feature)
		return false
	}
	return true
}
