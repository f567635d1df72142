package model

// Parallel sends each event to every branch: through the branch's filter
// when it has one, then to its subscriber, whose reply goes to the
// branch's reply or else the Parallel's.
type Parallel struct {
	TypeMeta `json:",inline"`
	Metadata ObjectMeta      `json:"metadata"`
	Spec     ParallelSpec    `json:"spec,omitempty" knc:"optional"`
	Status   *ParallelStatus `json:"status,omitempty"`
}

// ParallelSpec is a Parallel's desired state.
type ParallelSpec struct {
	Branches []ParallelBranch `json:"branches,omitempty"`
	// ChannelTemplate is the channel in front of the branches; Knative's
	// defaulting takes the cluster's default channel when it is absent.
	ChannelTemplate *ChannelTemplateSpec `json:"channelTemplate,omitempty"`
	Reply           *Destination         `json:"reply,omitempty"`
}

// ParallelBranch is one branch.
type ParallelBranch struct {
	Filter     *Destination  `json:"filter,omitempty"`
	Subscriber *Destination  `json:"subscriber,omitempty"`
	Reply      *Destination  `json:"reply,omitempty"`
	Delivery   *DeliverySpec `json:"delivery,omitempty"`
}

// ParallelStatus is a Parallel's observed state. The statuses of the
// channels and subscriptions its controller creates are kept as read.
type ParallelStatus struct {
	Status               `json:",inline"`
	IngressChannelStatus map[string]any     `json:"ingressChannelStatus,omitempty" knc:"open"`
	BranchStatuses       []map[string]any   `json:"branchStatuses,omitempty" knc:"open"`
	Address              *Addressable       `json:"address,omitempty"`
	Addresses            []Addressable      `json:"addresses,omitempty"`
	Auth                 *AuthStatus        `json:"auth,omitempty"`
	Policies             []AppliedPolicyRef `json:"policies,omitempty"`
}

func (p *Parallel) GetMetadata() *ObjectMeta { return &p.Metadata }

// SetDefaults fills in the namespace and the namespaces of every
// destination's ref.
func (p *Parallel) SetDefaults(d Defaults) {
	defaultNamespace(&p.Metadata, d)
	ns := p.Metadata.Namespace
	for i := range p.Spec.Branches {
		b := &p.Spec.Branches[i]
		defaultDestination(b.Filter, ns)
		defaultDestination(b.Subscriber, ns)
		defaultDestination(b.Reply, ns)
		defaultDelivery(b.Delivery, ns)
	}
	defaultDestination(p.Spec.Reply, ns)
}
