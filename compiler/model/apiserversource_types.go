package model

// ApiServerSource sends an event for each change of the Kubernetes
// resources it watches.
type ApiServerSource struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta             `json:"metadata"`
	Spec     ApiServerSourceSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *ApiServerSourceStatus `json:"status,omitempty"`
}

// ApiServerSourceSpec is an ApiServerSource's desired state.
type ApiServerSourceSpec struct {
	SourceSpec `json:",inline"`
	// Resources are the kinds watched, each with an optional selector.
	Resources []APIVersionKindSelector `json:"resources,omitempty"`
	// Owner restricts the events to resources owned by this kind.
	Owner *APIVersionKind `json:"owner,omitempty"`
	// Mode is Reference (the default) or Resource.
	Mode               string                   `json:"mode,omitempty"`
	ServiceAccountName string                   `json:"serviceAccountName,omitempty"`
	NamespaceSelector  *LabelSelector           `json:"namespaceSelector,omitempty"`
	Filters            []SubscriptionsAPIFilter `json:"filters,omitempty"`
}

// APIVersionKindSelector names a kind, and optionally the labels of the
// objects of it, an ApiServerSource watches.
type APIVersionKindSelector struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Selector   *LabelSelector `json:"selector,omitempty"`
}

// APIVersionKind names a kind.
type APIVersionKind struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
}

// ApiServerSourceStatus is an ApiServerSource's observed state.
type ApiServerSourceStatus struct {
	SourceStatus `json:",inline"`
	Namespaces   []string `json:"namespaces,omitempty"`
}

// The event modes of an ApiServerSource.
const (
	APIServerModeReference = "Reference"
	APIServerModeResource  = "Resource"
)

func (a *ApiServerSource) GetMetadata() *ObjectMeta   { return &a.Metadata }
func (a *ApiServerSource) GetSourceSpec() *SourceSpec { return &a.Spec.SourceSpec }

// SetDefaults fills in the namespace, the mode, the service account and
// the namespace of the sink's ref, as Knative's defaulting does.
func (a *ApiServerSource) SetDefaults(d Defaults) {
	defaultNamespace(&a.Metadata, d)
	if a.Spec.Mode == "" {
		a.Spec.Mode = APIServerModeReference
	}
	if a.Spec.ServiceAccountName == "" {
		a.Spec.ServiceAccountName = "default"
	}
	defaultDestination(a.Spec.Sink, a.Metadata.Namespace)
}
