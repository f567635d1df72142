package model

// ContainerSource runs a container that sends events to the sink, whose
// address it finds in K_SINK.
type ContainerSource struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta          `json:"metadata"`
	Spec     ContainerSourceSpec `json:"spec,omitempty" knc:"optional"`
	Status   *SourceStatus       `json:"status,omitempty"`
}

// ContainerSourceSpec is a ContainerSource's desired state.
type ContainerSourceSpec struct {
	SourceSpec `json:",inline"`
	// Template is a Kubernetes PodTemplateSpec, decoded as Kubernetes'
	// own type when validated.
	Template map[string]any `json:"template,omitempty" knc:"open"`
}

func (c *ContainerSource) GetMetadata() *ObjectMeta   { return &c.Metadata }
func (c *ContainerSource) GetSourceSpec() *SourceSpec { return &c.Spec.SourceSpec }

// SetDefaults fills in the namespace and the namespace of the sink's ref.
// Knative also names each unnamed container after the source; knc
// validates as if it had.
func (c *ContainerSource) SetDefaults(d Defaults) {
	defaultNamespace(&c.Metadata, d)
	defaultDestination(c.Spec.Sink, c.Metadata.Namespace)
}
