package model

// Sequence sends each event through its steps in order, each step's reply
// going to the next, and the last one's to the reply.
type Sequence struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta      `json:"metadata"`
	Spec     SequenceSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *SequenceStatus `json:"status,omitempty"`
}

// SequenceSpec is a Sequence's desired state.
type SequenceSpec struct {
	Steps []SequenceStep `json:"steps,omitempty"`
	// ChannelTemplate is the channel between steps; Knative's defaulting
	// takes the cluster's default channel when it is absent.
	ChannelTemplate *ChannelTemplateSpec `json:"channelTemplate,omitempty"`
	Reply           *Destination         `json:"reply,omitempty"`
}

// SequenceStep is one step: where the event goes, and how.
type SequenceStep struct {
	Destination `json:",inline"`
	Delivery    *DeliverySpec `json:"delivery,omitempty"`
}

// SequenceStatus is a Sequence's observed state. The statuses of the
// channels and subscriptions its controller creates are kept as read.
type SequenceStatus struct {
	Status               `json:",inline"`
	SubscriptionStatuses []map[string]any   `json:"subscriptionStatuses,omitempty" knc:"open"`
	ChannelStatuses      []map[string]any   `json:"channelStatuses,omitempty" knc:"open"`
	Address              *Addressable       `json:"address,omitempty"`
	Auth                 *AuthStatus        `json:"auth,omitempty"`
	Policies             []AppliedPolicyRef `json:"policies,omitempty"`
}

// AppliedPolicyRef names an EventPolicy that applies to an object.
type AppliedPolicyRef struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Name       string `json:"name,omitempty"`
}

func (s *Sequence) GetMetadata() *ObjectMeta { return &s.Metadata }

// SetDefaults fills in the namespace and the namespaces of the steps' and
// the reply's refs. The channel template is left as written: knc build
// writes what the repository says.
func (s *Sequence) SetDefaults(d Defaults) {
	defaultNamespace(&s.Metadata, d)
	for i := range s.Spec.Steps {
		defaultDestination(&s.Spec.Steps[i].Destination, s.Metadata.Namespace)
		defaultDelivery(s.Spec.Steps[i].Delivery, s.Metadata.Namespace)
	}
	defaultDestination(s.Spec.Reply, s.Metadata.Namespace)
}
