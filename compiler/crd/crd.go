package crd

import (
	"encoding/json"
	"fmt"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
)

// Schemas returns the structural OpenAPI v3 schema of each kind, keyed by
// kind, as the CRDs carry it: generated from the CUE schema, with the
// immutability rules added.
func Schemas() (map[string]*apiextensionsv1.JSONSchemaProps, error) {
	raw, err := schemas()
	if err != nil {
		return nil, err
	}
	out := map[string]*apiextensionsv1.JSONSchemaProps{}
	for _, k := range knative.Kinds {
		kind := k.Name
		s := raw[kind]
		if err := addImmutability(kind, s); err != nil {
			return nil, err
		}
		if err := addStatusDefault(kind, s); err != nil {
			return nil, err
		}
		props, err := toProps(s)
		if err != nil {
			return nil, fmt.Errorf("schema of %s: %w", kind, err)
		}
		out[kind] = props
	}
	return out, nil
}

func toProps(s schemaNode) (*apiextensionsv1.JSONSchemaProps, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var p apiextensionsv1.JSONSchemaProps
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, err
	}
	return &p, nil
}

// addImmutability adds the transition rules of the fields the control-plane
// contract makes immutable. A transition rule runs on updates only, and only
// where both the old and the new object have the field, so a rule that must
// also catch a field being added or removed sits on the parent.
//
// A Broker's class annotation is immutable too, but CEL rules in a CRD see
// only metadata.name and metadata.generateName; that rule is a
// ValidatingAdmissionPolicy instead (see BrokerClassPolicy).
func addImmutability(kind string, s schemaNode) error {
	spec, err := property(s, "spec")
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	switch kind {
	case "Broker":
		// The contract has spec.config populated when a Broker is created,
		// possibly as an empty object; Knative's webhook refuses an empty
		// KReference in a request, so knc build writes none and the API
		// server fills in {} by default. A KReference's fields are
		// required only when it is not empty. The default on spec makes
		// the one on config apply to a Broker without a spec.
		config, err := property(spec, "config")
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		spec["default"] = schemaNode{}
		config["default"] = schemaNode{}
		// Everything that constrains a complete KReference (its required
		// fields, the choice of apiVersion or group) applies only when it
		// is not empty.
		complete := schemaNode{"required": config["required"]}
		delete(config, "required")
		if alts, ok := config["anyOf"]; ok {
			complete = schemaNode{"allOf": []any{complete, schemaNode{"anyOf": alts}}}
			delete(config, "anyOf")
		}
		addLogical(config, "anyOf", []any{complete, schemaNode{"maxProperties": json.Number("0")}})
		addRule(spec, rule{
			Rule:      "has(self.config) == has(oldSelf.config) && (!has(self.config) || self.config == oldSelf.config)",
			Message:   "spec.config is immutable: delete and re-create the Broker to change it",
			FieldPath: ".config",
		})
	case "Trigger":
		broker, err := property(spec, "broker")
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		addRule(broker, rule{Rule: "self == oldSelf", Message: "spec.broker is immutable: delete and re-create the Trigger to move it to another Broker"})
	case "Channel":
		addRule(spec, rule{
			Rule:      "has(self.channelTemplate) == has(oldSelf.channelTemplate) && (!has(self.channelTemplate) || self.channelTemplate == oldSelf.channelTemplate)",
			Message:   "spec.channelTemplate is immutable: delete and re-create the Channel to change it",
			FieldPath: ".channelTemplate",
		})
	case "Subscription":
		channel, err := property(spec, "channel")
		if err != nil {
			return fmt.Errorf("%s: %w", kind, err)
		}
		addRule(channel, rule{Rule: "self == oldSelf", Message: "spec.channel is immutable: delete and re-create the Subscription to move it to another Channel"})
	}
	return nil
}

// addStatusDefault makes the API server show an object that knc's runtime
// has not yet reported on with status.observedGeneration 0. Without it the
// object has no status at all, which kstatus (Flux's health checks, kubectl
// wait --for=jsonpath aside) takes for Current, so a Kustomization with
// wait: true or healthChecks turned Ready before the runtime said anything.
// Generation 0 is never an object's, so kstatus and the Argo CD health
// check see it as not yet observed. The default applies whenever the API
// server reads the object, and the runtime's first status write replaces it.
func addStatusDefault(kind string, s schemaNode) error {
	status, err := property(s, "status")
	if err != nil {
		return fmt.Errorf("%s: %w", kind, err)
	}
	status["default"] = schemaNode{"observedGeneration": json.Number("0")}
	return nil
}

func property(s schemaNode, name string) (schemaNode, error) {
	props, _ := s["properties"].(schemaNode)
	p, ok := props[name].(schemaNode)
	if !ok {
		return nil, fmt.Errorf("the schema has no %s", name)
	}
	return p, nil
}

// OpenAPI returns an OpenAPI 3.0 document whose components hold the
// schemas of the four kinds, the same schemas the CRDs carry, as indented
// JSON.
func OpenAPI() ([]byte, error) {
	all, err := Schemas()
	if err != nil {
		return nil, err
	}
	doc := map[string]any{
		"openapi":    "3.0.0",
		"info":       map[string]any{"title": "knc: Knative Eventing kinds", "version": knative.Version},
		"paths":      map[string]any{},
		"components": map[string]any{"schemas": all},
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the OpenAPI document: %w", err)
	}
	return append(b, '\n'), nil
}

// Labels on every CRD. Knative labels its addressable kinds so that tools
// can find them by duck type.
const (
	LabelManagedBy   = "app.kubernetes.io/managed-by"
	LabelAddressable = "duck.knative.dev/addressable"
)

// CRDs returns the CustomResourceDefinitions of the four kinds, in
// knative.Kinds order.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	all, err := Schemas()
	if err != nil {
		return nil, err
	}
	var out []*apiextensionsv1.CustomResourceDefinition
	for _, n := range knative.Kinds {
		kind := n.Name
		labels := map[string]string{LabelManagedBy: "knc"}
		if n.Addressable {
			labels[LabelAddressable] = "true"
		}
		out = append(out, &apiextensionsv1.CustomResourceDefinition{
			TypeMeta: metav1.TypeMeta{APIVersion: "apiextensions.k8s.io/v1", Kind: "CustomResourceDefinition"},
			ObjectMeta: metav1.ObjectMeta{
				Name:   n.Plural + "." + n.Group,
				Labels: labels,
			},
			Spec: apiextensionsv1.CustomResourceDefinitionSpec{
				Group: n.Group,
				Names: apiextensionsv1.CustomResourceDefinitionNames{
					Kind:       kind,
					ListKind:   kind + "List",
					Plural:     n.Plural,
					Singular:   n.Singular,
					ShortNames: n.ShortNames,
					Categories: n.Categories,
				},
				Scope: apiextensionsv1.NamespaceScoped,
				Versions: []apiextensionsv1.CustomResourceDefinitionVersion{{
					Name:                     knative.Version,
					Served:                   true,
					Storage:                  true,
					Schema:                   &apiextensionsv1.CustomResourceValidation{OpenAPIV3Schema: all[kind]},
					Subresources:             &apiextensionsv1.CustomResourceSubresources{Status: &apiextensionsv1.CustomResourceSubresourceStatus{}},
					AdditionalPrinterColumns: printerColumns(kind),
				}},
			},
		})
	}
	return out, nil
}

// printerColumns are Knative's: the address of an addressable kind, the
// Broker of a Trigger, the Ready condition and its reason, and the age.
func printerColumns(kind string) []apiextensionsv1.CustomResourceColumnDefinition {
	var cols []apiextensionsv1.CustomResourceColumnDefinition
	switch kind {
	case knative.KindBroker, knative.KindChannel, knative.KindSequence, knative.KindParallel:
		cols = append(cols, apiextensionsv1.CustomResourceColumnDefinition{Name: "URL", Type: "string", JSONPath: ".status.address.url"})
	case knative.KindTrigger:
		cols = append(cols,
			apiextensionsv1.CustomResourceColumnDefinition{Name: "Broker", Type: "string", JSONPath: ".spec.broker"},
			apiextensionsv1.CustomResourceColumnDefinition{Name: "Subscriber_URI", Type: "string", JSONPath: ".status.subscriberUri"},
		)
	}
	return append(cols,
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Age", Type: "date", JSONPath: ".metadata.creationTimestamp"},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Ready", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].status`},
		apiextensionsv1.CustomResourceColumnDefinition{Name: "Reason", Type: "string", JSONPath: `.status.conditions[?(@.type=="Ready")].reason`},
	)
}

// BrokerClassPolicyName names the ValidatingAdmissionPolicy and its binding
// that keep a Broker's class annotation immutable.
const BrokerClassPolicyName = "knc-broker-class-immutable"

// BrokerClassPolicy returns a ValidatingAdmissionPolicy and its binding
// refusing updates that change a Broker's eventing.knative.dev/broker.class
// annotation. It is a policy rather than a CRD rule because CRD rules cannot
// read annotations. A Broker that had no annotation is treated as having an
// empty one, so adding it later is refused as well: the contract has the
// class set when the Broker is created.
func BrokerClassPolicy() []map[string]any {
	annotation := "'" + model.BrokerClassAnnotation + "'"
	class := func(obj string) string {
		return fmt.Sprintf("(has(%s.metadata.annotations) && %s in %s.metadata.annotations ? %s.metadata.annotations[%s] : '')", obj, annotation, obj, obj, annotation)
	}
	policy := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "ValidatingAdmissionPolicy",
		"metadata":   map[string]any{"name": BrokerClassPolicyName, "labels": map[string]any{LabelManagedBy: "knc"}},
		"spec": map[string]any{
			"failurePolicy": "Fail",
			"matchConstraints": map[string]any{
				"resourceRules": []any{map[string]any{
					"apiGroups":   []any{knative.GroupEventing},
					"apiVersions": []any{"*"},
					"operations":  []any{"UPDATE"},
					"resources":   []any{"brokers"},
				}},
			},
			"validations": []any{map[string]any{
				"expression": class("object") + " == " + class("oldObject"),
				"message":    "the annotation " + model.BrokerClassAnnotation + " is immutable: delete and re-create the Broker to change its class",
				"reason":     "Invalid",
			}},
		},
	}
	binding := map[string]any{
		"apiVersion": "admissionregistration.k8s.io/v1",
		"kind":       "ValidatingAdmissionPolicyBinding",
		"metadata":   map[string]any{"name": BrokerClassPolicyName, "labels": map[string]any{LabelManagedBy: "knc"}},
		"spec": map[string]any{
			"policyName":        BrokerClassPolicyName,
			"validationActions": []any{"Deny"},
		},
	}
	return []map[string]any{policy, binding}
}
