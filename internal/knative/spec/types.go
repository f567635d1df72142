package spec

// KReference refers to an object by apiVersion, kind and name.
type KReference struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	Name       string `json:"name,omitempty"`
	Namespace  string `json:"namespace,omitempty"`
	// Group may replace APIVersion under the kreference-group feature.
	Group string `json:"group,omitempty"`
	// Address names one of the target's addresses.
	Address *string `json:"address,omitempty"`
}

// Destination is a ref, a uri, or a uri relative to a ref's address.
type Destination struct {
	Ref *KReference `json:"ref,omitempty"`
	// URI and CACerts are pointers because Knative tells an empty value
	// from an absent one: uri: "" is a relative URI, CACerts: "" is not PEM.
	URI      *string `json:"uri,omitempty"`
	CACerts  *string `json:"CACerts,omitempty"`
	Audience *string `json:"audience,omitempty"`
}

// DeliverySpec holds the delivery options of a Broker, Trigger, Channel or
// Subscription.
type DeliverySpec struct {
	DeadLetterSink *Destination `json:"deadLetterSink,omitempty"`
	Retry          *int64       `json:"retry,omitempty"`
	// The strings are pointers because Knative refuses an empty value
	// where it admits an absent one.
	BackoffPolicy *string `json:"backoffPolicy,omitempty"`
	BackoffDelay  *string `json:"backoffDelay,omitempty"`
	Timeout       *string `json:"timeout,omitempty"`
	RetryAfterMax *string `json:"retryAfterMax,omitempty"`
	Format        *string `json:"format,omitempty"`
}

// BrokerSpec is a Broker's desired state.
type BrokerSpec struct {
	Config   *KReference   `json:"config,omitempty"`
	Delivery *DeliverySpec `json:"delivery,omitempty"`
}

// TriggerSpec is a Trigger's desired state.
type TriggerSpec struct {
	Broker     string                   `json:"broker,omitempty"`
	BrokerRef  *KReference              `json:"brokerRef,omitempty"`
	Filter     *TriggerFilter           `json:"filter,omitempty"`
	Filters    []SubscriptionsAPIFilter `json:"filters,omitempty"`
	Subscriber Destination              `json:"subscriber"`
	Delivery   *DeliverySpec            `json:"delivery,omitempty"`
}

// TriggerFilter is the attribute filter: exact values, "" for any value.
type TriggerFilter struct {
	Attributes map[string]string `json:"attributes,omitempty"`
}

// SubscriptionsAPIFilter is one entry of spec.filters, in exactly one dialect.
type SubscriptionsAPIFilter struct {
	Exact  map[string]string        `json:"exact,omitempty"`
	Prefix map[string]string        `json:"prefix,omitempty"`
	Suffix map[string]string        `json:"suffix,omitempty"`
	All    []SubscriptionsAPIFilter `json:"all,omitempty"`
	Any    []SubscriptionsAPIFilter `json:"any,omitempty"`
	Not    *SubscriptionsAPIFilter  `json:"not,omitempty"`
	CESQL  *string                  `json:"cesql,omitempty"`
}

// ChannelSpec is a Channel's desired state.
type ChannelSpec struct {
	ChannelTemplate *ChannelTemplateSpec `json:"channelTemplate,omitempty"`
	Subscribers     []SubscriberSpec     `json:"subscribers,omitempty"`
	Delivery        *DeliverySpec        `json:"delivery,omitempty"`
}

// ChannelTemplateSpec selects the backing channel implementation.
type ChannelTemplateSpec struct {
	APIVersion string         `json:"apiVersion"`
	Kind       string         `json:"kind"`
	Spec       map[string]any `json:"spec,omitempty" knc:"open"`
}

// SubscriberSpec is one compiled subscriber of a Channel.
type SubscriberSpec struct {
	UID           string        `json:"uid,omitempty"`
	Generation    int64         `json:"generation,omitempty"`
	SubscriberURI string        `json:"subscriberUri,omitempty"`
	ReplyURI      string        `json:"replyUri,omitempty"`
	Delivery      *DeliverySpec `json:"delivery,omitempty"`
}

// SubscriptionSpec is a Subscription's desired state.
type SubscriptionSpec struct {
	Channel    KReference    `json:"channel"`
	Subscriber *Destination  `json:"subscriber,omitempty"`
	Reply      *Destination  `json:"reply,omitempty"`
	Delivery   *DeliverySpec `json:"delivery,omitempty"`
}
