package model

import "github.com/knc-dev/knc/internal/knative/spec"

// ObjectMeta is the part of Kubernetes' ObjectMeta that manifests carry.
type ObjectMeta struct {
	Name              string            `json:"name"`
	Namespace         string            `json:"namespace,omitempty"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
	GenerateName      string            `json:"generateName,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	CreationTimestamp *string           `json:"creationTimestamp,omitempty" knc:"nullable"`
	Finalizers        []string          `json:"finalizers,omitempty"`
}

// TypeMeta names an object's apiVersion and kind.
type TypeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
}

// KReference refers to an object by apiVersion, kind and name.
type KReference = spec.KReference

// Destination is a ref, a uri, or a uri relative to a ref's address.
type Destination = spec.Destination

// DeliverySpec holds the delivery options of a Broker, Trigger, Channel or
// Subscription.
type DeliverySpec = spec.DeliverySpec

// Condition is a Knative apis.Condition.
type Condition struct {
	Type               string `json:"type" knc:"optional"`
	Status             string `json:"status" knc:"optional"`
	Severity           string `json:"severity,omitempty"`
	Reason             string `json:"reason,omitempty"`
	Message            string `json:"message,omitempty"`
	LastTransitionTime string `json:"lastTransitionTime,omitempty" knc:"time"`
}

// Status is the part of status every kind shares.
type Status struct {
	ObservedGeneration int64             `json:"observedGeneration,omitempty"`
	Conditions         []Condition       `json:"conditions,omitempty"`
	Annotations        map[string]string `json:"annotations,omitempty"`
}

// Addressable is the duck type of anything with an address.
type Addressable struct {
	URL      string `json:"url,omitempty"`
	Name     string `json:"name,omitempty"`
	CACerts  string `json:"CACerts,omitempty"`
	Audience string `json:"audience,omitempty"`
}

// Str returns the string p points to, or "" for nil.
func Str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
