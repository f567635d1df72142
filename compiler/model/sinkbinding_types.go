package model

// SinkBinding gives the workloads its subject names the address of its
// sink, in K_SINK.
type SinkBinding struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta         `json:"metadata"`
	Spec     SinkBindingSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *SinkBindingStatus `json:"status,omitempty"`
}

// SinkBindingSpec is a SinkBinding's desired state.
type SinkBindingSpec struct {
	SourceSpec `json:",inline"`
	Subject    BindingSubject `json:"subject,omitempty" knc:"optional"`
}

// BindingSubject names the workloads a binding applies to: one by name,
// or those a selector picks.
type BindingSubject struct {
	APIVersion string         `json:"apiVersion,omitempty"`
	Kind       string         `json:"kind,omitempty"`
	Namespace  string         `json:"namespace,omitempty"`
	Name       string         `json:"name,omitempty"`
	Selector   *LabelSelector `json:"selector,omitempty"`
}

// SinkBindingStatus is a SinkBinding's observed state.
type SinkBindingStatus struct {
	SourceStatus        `json:",inline"`
	OIDCTokenSecretName *string `json:"oidcTokenSecretName,omitempty"`
}

func (b *SinkBinding) GetMetadata() *ObjectMeta   { return &b.Metadata }
func (b *SinkBinding) GetSourceSpec() *SourceSpec { return &b.Spec.SourceSpec }

// SetDefaults fills in the namespace, the subject's namespace and the
// namespace of the sink's ref, as Knative's defaulting does.
func (b *SinkBinding) SetDefaults(d Defaults) {
	defaultNamespace(&b.Metadata, d)
	if b.Spec.Subject.Namespace == "" {
		b.Spec.Subject.Namespace = b.Metadata.Namespace
	}
	defaultDestination(b.Spec.Sink, b.Metadata.Namespace)
}
