package model

import (
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// validateSourceSpec checks what every source shares, as Knative's
// SourceSpec validation does: the sink is a Destination and is required
// (Knative keeps it as a value, so an absent sink is an empty one), and
// each CloudEvent extension name is alphanumeric.
func validateSourceSpec(errs *FieldErrors, s *SourceSpec, rc refContext) {
	if s.Sink == nil {
		errs.Add("spec.sink", "is required: give the ref or uri the source sends its events to")
	} else {
		validateDestination(errs, "spec.sink", s.Sink, rc)
	}
	if s.CEOverrides != nil {
		validateCEOverrides(errs, "spec.ceOverrides", s.CEOverrides)
	}
}

// validateCEOverrides checks the extension names. Knative stops at the
// first bad name, in the map's random order; knc names every one.
func validateCEOverrides(errs *FieldErrors, path string, o *CloudEventOverrides) {
	for _, k := range sortedKeys(o.Extensions) {
		if p := extensionNameProblem(k); p != "" {
			errs.Add(path+".extensions["+k+"]", "%s", p)
		}
	}
}

// extensionNameProblem is Knative's rule for a CloudEvent extension name
// in ceOverrides: not empty, ASCII letters and digits only.
func extensionNameProblem(name string) string {
	if name == "" {
		return "an extension name must not be empty"
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return "\"" + name + "\" is not a valid extension name: use ASCII letters and digits only"
		}
	}
	return ""
}

// labelSelectorProblem is Kubernetes' own check of a label selector, as
// Knative applies it to a SinkBinding's subject.
func labelSelectorProblem(s *LabelSelector) string {
	ls := &metav1.LabelSelector{MatchLabels: s.MatchLabels}
	for _, r := range s.MatchExpressions {
		ls.MatchExpressions = append(ls.MatchExpressions, metav1.LabelSelectorRequirement{
			Key: r.Key, Operator: metav1.LabelSelectorOperator(r.Operator), Values: r.Values,
		})
	}
	if _, err := metav1.LabelSelectorAsSelector(ls); err != nil {
		return strings.TrimSpace(err.Error())
	}
	return ""
}
