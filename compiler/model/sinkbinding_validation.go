package model

import (
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks one SinkBinding as Knative's admission does, after its
// defaulting (an empty subject namespace is the binding's own).
func (b *SinkBinding) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &b.Metadata)
	validateSourceSpec(&errs, &b.Spec.SourceSpec, refContext{features: f})
	s := &b.Spec.Subject
	const p = "spec.subject"
	if s.APIVersion == "" {
		errs.Add(p+".apiVersion", "is required")
	} else if msgs := validation.IsQualifiedName(s.APIVersion); len(msgs) > 0 {
		errs.Add(p+".apiVersion", "%q is not a valid API version: %s", s.APIVersion, strings.Join(msgs, "; "))
	}
	if s.Kind == "" {
		errs.Add(p+".kind", "is required")
	} else if msgs := validation.IsCIdentifier(s.Kind); len(msgs) > 0 {
		errs.Add(p+".kind", "%q is not a valid kind: %s", s.Kind, strings.Join(msgs, "; "))
	}
	ns := s.Namespace
	if ns == "" {
		ns = namespace
	}
	if msgs := validation.IsDNS1123Label(ns); len(msgs) > 0 {
		errs.Add(p+".namespace", "%q is not a valid namespace: %s", ns, strings.Join(msgs, "; "))
	} else if ns != namespace {
		errs.Add(p+".namespace", "%q differs from the SinkBinding's namespace %q; a binding applies in its own namespace only, so leave it out", ns, namespace)
	}
	switch {
	case s.Selector != nil && s.Name != "":
		errs.Add(p, "sets both name and selector; give only one")
	case s.Selector != nil:
		if problem := labelSelectorProblem(s.Selector); problem != "" {
			errs.Add(p+".selector", "%s", problem)
		}
	case s.Name != "":
		if msgs := validation.IsDNS1123Label(s.Name); len(msgs) > 0 {
			errs.Add(p+".name", "%q is not a valid name: %s", s.Name, strings.Join(msgs, "; "))
		}
	default:
		errs.Add(p, "needs a name or a selector")
	}
	if b.Status != nil {
		validateStatus(&errs, "status", &b.Status.Status)
	}
	return errs
}
