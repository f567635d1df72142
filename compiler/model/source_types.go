package model

// SourceSpec is the part of every source's spec that makes it one, the
// duck type of Knative's sources: where its events go, and the CloudEvent
// attributes it adds to them.
type SourceSpec struct {
	Sink        *Destination         `json:"sink,omitempty"`
	CEOverrides *CloudEventOverrides `json:"ceOverrides,omitempty"`
}

// CloudEventOverrides are attributes a source sets on every event it
// sends.
type CloudEventOverrides struct {
	Extensions map[string]string `json:"extensions,omitempty"`
}

// SourceStatus is the status every source shares.
type SourceStatus struct {
	Status               `json:",inline"`
	SinkURI              string                 `json:"sinkUri,omitempty"`
	CloudEventAttributes []CloudEventAttributes `json:"ceAttributes,omitempty"`
	SinkCACerts          *string                `json:"sinkCACerts,omitempty"`
	SinkAudience         *string                `json:"sinkAudience,omitempty"`
	Auth                 *AuthStatus            `json:"auth,omitempty"`
}

// CloudEventAttributes names the type and source of the events a source
// sends.
type CloudEventAttributes struct {
	Type   string `json:"type,omitempty"`
	Source string `json:"source,omitempty"`
}

// AuthStatus names the service accounts an object's deliveries
// authenticate as.
type AuthStatus struct {
	ServiceAccountName  *string  `json:"serviceAccountName,omitempty"`
	ServiceAccountNames []string `json:"serviceAccountNames,omitempty"`
}

// LabelSelector is Kubernetes' label selector. Its fields are all
// optional here, as in Knative's decoding: where Knative checks a
// selector, the check is Kubernetes' own (see labelSelectorProblem).
type LabelSelector struct {
	MatchLabels      map[string]string          `json:"matchLabels,omitempty"`
	MatchExpressions []LabelSelectorRequirement `json:"matchExpressions,omitempty"`
}

// LabelSelectorRequirement is one expression of a LabelSelector.
type LabelSelectorRequirement struct {
	Key      string   `json:"key,omitempty"`
	Operator string   `json:"operator,omitempty"`
	Values   []string `json:"values,omitempty"`
}

// Source is an object that sends events to a sink: the four core sources
// and any other kind the duck type or knc.yaml makes one.
type Source interface {
	Object
	// GetSourceSpec returns the sink and overrides.
	GetSourceSpec() *SourceSpec
}
