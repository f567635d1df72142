package model

// DuckSource is an object of a kind knc does not model that is an event
// source by its duck type (see project.Config.IsSource): knc reads its
// spec.sink and spec.ceOverrides, and writes the object out as it is.
type DuckSource struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta `json:"metadata"`
	Spec     SourceSpec `json:"spec"`
}

func (s *DuckSource) GetMetadata() *ObjectMeta   { return &s.Metadata }
func (s *DuckSource) GetSourceSpec() *SourceSpec { return &s.Spec }

// Validate checks the sink and the CloudEvent overrides. The object's
// other fields are its own CRD's, which knc does not know.
func (s *DuckSource) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateSourceSpec(&errs, &s.Spec, refContext{features: f})
	return errs
}

// SetDefaults fills in the namespace and the namespace of the sink's ref.
func (s *DuckSource) SetDefaults(d Defaults) {
	defaultNamespace(&s.Metadata, d)
	defaultDestination(s.Spec.Sink, s.Metadata.Namespace)
}
