package knative

// API groups of the four kinds, and of the flows.
const (
	GroupEventing  = "eventing.knative.dev"
	GroupMessaging = "messaging.knative.dev"
	GroupFlows     = "flows.knative.dev"
)

// Version is the one API version of the four kinds that knc supports.
const Version = "v1"

// API versions of the four kinds: group/version.
const (
	EventingV1  = GroupEventing + "/" + Version
	MessagingV1 = GroupMessaging + "/" + Version
	FlowsV1     = GroupFlows + "/" + Version
)

// The four kinds.
const (
	KindBroker       = "Broker"
	KindTrigger      = "Trigger"
	KindChannel      = "Channel"
	KindSubscription = "Subscription"
	// Sequence and Parallel are compiled into Channels and
	// Subscriptions; knc serves their CRDs and reports their status.
	KindSequence = "Sequence"
	KindParallel = "Parallel"
)

// PingSource, of Knative's sources, which knc's runtime fires.
const (
	GroupSources   = "sources.knative.dev"
	SourcesV1      = GroupSources + "/" + Version
	KindPingSource = "PingSource"
)

// PingSourceEventType is the type of the events a PingSource sends.
const PingSourceEventType = "dev.knative.sources.ping"

// PingSourceEventSource is the source attribute of the events PingSource
// namespace/name sends.
func PingSourceEventSource(namespace, name string) string {
	return "/apis/v1/namespaces/" + namespace + "/pingsources/" + name
}

// KindInMemoryChannel is the channel implementation Knative Eventing ships
// as its default, in messaging.knative.dev/v1: a Channel's
// spec.channelTemplate may name it.
const KindInMemoryChannel = "InMemoryChannel"

// Kind describes one of the four kinds as Knative Eventing serves it.
type Kind struct {
	Name       string
	Group      string
	Plural     string
	Singular   string
	ShortNames []string
	Categories []string
	// Addressable kinds have status.address: events are sent to them.
	Addressable bool
}

// APIVersion returns group/version.
func (k Kind) APIVersion() string { return k.Group + "/" + Version }

// Kinds are the four kinds, the two flows and PingSource, in the order knc writes and
// reports them.
var Kinds = []Kind{
	{Name: KindBroker, Group: GroupEventing, Plural: "brokers", Singular: "broker", Categories: []string{"all", "knative", "eventing"}, Addressable: true},
	{Name: KindTrigger, Group: GroupEventing, Plural: "triggers", Singular: "trigger", Categories: []string{"all", "knative", "eventing"}},
	{Name: KindChannel, Group: GroupMessaging, Plural: "channels", Singular: "channel", ShortNames: []string{"ch"}, Categories: []string{"all", "knative", "messaging"}, Addressable: true},
	{Name: KindSubscription, Group: GroupMessaging, Plural: "subscriptions", Singular: "subscription", ShortNames: []string{"sub"}, Categories: []string{"all", "knative", "messaging"}},
	{Name: KindSequence, Group: GroupFlows, Plural: "sequences", Singular: "sequence", Categories: []string{"all", "knative", "flows"}, Addressable: true},
	{Name: KindParallel, Group: GroupFlows, Plural: "parallels", Singular: "parallel", Categories: []string{"all", "knative", "flows"}, Addressable: true},
	// knc's runtime fires PingSources, so it serves their CRD too.
	{Name: KindPingSource, Group: GroupSources, Plural: "pingsources", Singular: "pingsource", Categories: []string{"all", "knative", "sources"}},
}

// Lookup returns the kind named name, and whether it is one of the four.
func Lookup(name string) (Kind, bool) {
	for _, k := range Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return Kind{}, false
}

// IsEventingGroup reports whether group is one of Knative Eventing's own:
// eventing.knative.dev or messaging.knative.dev.
func IsEventingGroup(group string) bool {
	return group == GroupEventing || group == GroupMessaging
}

// KindLabel names a kind as knc's messages and drawings do: by kind alone
// when its group is Knative Eventing's or the core one, which keeps the
// common case short, and as KIND.GROUP otherwise, so that a Service of
// serving.knative.dev and a core Service read differently.
func KindLabel(group, kind string) string {
	if group == "" || IsEventingGroup(group) {
		return kind
	}
	return kind + "." + group
}
