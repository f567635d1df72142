package model

import (
	"encoding/json"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// Validate checks one Trigger on its own. namespace is the namespace the
// Trigger will live in, after defaulting.
func (t *Trigger) Validate(f Features, namespace string) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &t.Metadata)
	validateKeepDeadLettered(&errs, &t.Metadata)
	s := &t.Spec
	rc := refContext{features: f}
	switch {
	case s.Broker == "" && s.BrokerRef == nil:
		errs.Add("spec.broker", "is required: name the Broker the Trigger subscribes to")
	case s.Broker != "" && s.BrokerRef != nil:
		errs.Add("spec", "sets both broker and brokerRef; give only one")
	case s.Broker != "":
		if msgs := validation.IsValidLabelValue(s.Broker); len(msgs) > 0 {
			errs.Add("spec.broker", "Knative's defaulting copies it into the label %s, and the API server refuses that label: %s", BrokerLabel, strings.Join(msgs, "; "))
		} else if p := nameProblem(s.Broker); p != "" {
			errs.Warn("spec.broker", "%s; Knative admits it, but no Broker has such a name", p)
		}
	}
	if s.BrokerRef != nil {
		if s.BrokerRef.Namespace != "" && !f[FeatureCrossNamespaceEventLinks] {
			f.require(&errs, "spec.brokerRef.namespace", FeatureCrossNamespaceEventLinks)
		} else {
			errs.Warn("spec.brokerRef", "knc routes a Trigger to the Broker named in spec.broker only; this Trigger gets no route (Knative reads brokerRef only with cross-namespace-event-links)")
		}
	}
	validateTriggerAnnotations(&errs, t, namespace)
	if s.Filter != nil {
		for _, k := range sortedKeys(s.Filter.Attributes) {
			if !attributeNameRE.MatchString(k) {
				errs.Add("spec.filter.attributes["+k+"]", "%q is not a valid attribute name: use lowercase letters and digits, starting with a letter", k)
			}
		}
	}
	if s.Filters != nil && f.require(&errs, "spec.filters", FeatureNewTriggerFilters) {
		for i := range s.Filters {
			validateFilter(&errs, "spec.filters["+itoa(i)+"]", &s.Filters[i])
		}
	}
	validateDestination(&errs, "spec.subscriber", &s.Subscriber, rc)
	if s.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", s.Delivery, rc)
	}
	if t.Status != nil {
		validateStatus(&errs, "status", &t.Status.Status)
	}
	return errs
}

// validateTriggerAnnotations checks the two annotations Knative's admission
// reads.
func validateTriggerAnnotations(errs *FieldErrors, t *Trigger, namespace string) {
	if v, ok := t.Metadata.Annotations[DependencyAnnotation]; ok {
		p := "metadata.annotations[" + DependencyAnnotation + "]"
		var ref struct {
			Kind       string `json:"kind"`
			Namespace  string `json:"namespace"`
			Name       string `json:"name"`
			UID        string `json:"uid"`
			APIVersion string `json:"apiVersion"`
			// The other fields of an object reference, so that values of a
			// wrong type fail as they do in Knative.
			ResourceVersion string `json:"resourceVersion"`
			FieldPath       string `json:"fieldPath"`
		}
		if err := json.Unmarshal([]byte(v), &ref); err != nil {
			errs.Add(p, "is not a JSON object reference such as {\"apiVersion\": \"sources.knative.dev/v1\", \"kind\": \"PingSource\", \"name\": \"ping\"}: %v", err)
		} else {
			var missing []string
			for _, m := range []struct{ field, value string }{{"apiVersion", ref.APIVersion}, {"kind", ref.Kind}, {"name", ref.Name}} {
				if m.value == "" {
					missing = append(missing, m.field)
				}
			}
			if len(missing) > 0 {
				errs.Add(p, "is missing %s", strings.Join(missing, ", "))
			}
			if ref.Namespace != "" && ref.Namespace != namespace {
				errs.Add(p, "names namespace %q; a dependency must be in the Trigger's namespace %q, so leave namespace out", ref.Namespace, namespace)
			}
		}
	}
	if v, ok := t.Metadata.Annotations[InjectionAnnotation]; ok {
		p := "metadata.annotations[" + InjectionAnnotation + "]"
		switch {
		case v != "enabled" && v != "disabled":
			errs.Add(p, "must be \"enabled\" or \"disabled\", not %q", v)
		case t.Spec.Broker != "default":
			errs.Add(p, "applies to the Broker named \"default\" only, and this Trigger names %q; remove the annotation", t.Spec.Broker)
		}
	}
}

// validateFilter checks one entry of spec.filters as Knative does: at most
// one dialect with content, valid attribute names, CESQL that parses. An
// entry or dialect without content filters nothing; Knative admits it, and
// knc warns.
func validateFilter(errs *FieldErrors, path string, f *SubscriptionsAPIFilter) {
	var dialects []string
	for _, d := range []struct {
		name string
		set  bool
	}{
		{"exact", len(f.Exact) > 0}, {"prefix", len(f.Prefix) > 0}, {"suffix", len(f.Suffix) > 0},
		{"all", len(f.All) > 0}, {"any", len(f.Any) > 0}, {"not", f.Not != nil}, {"cesql", f.CESQL != nil && *f.CESQL != ""},
	} {
		if d.set {
			dialects = append(dialects, d.name)
		}
	}
	switch len(dialects) {
	case 0:
		errs.Warn(path, "has no dialect with content, so it matches every event; give one of exact, prefix, suffix, all, any, not or cesql, or remove the entry")
	case 1:
	default:
		errs.Add(path, "has %d dialects (%s); use exactly one per entry, and combine entries with all or any", len(dialects), strings.Join(dialects, ", "))
	}
	for _, d := range []struct {
		name string
		m    map[string]string
	}{{"exact", f.Exact}, {"prefix", f.Prefix}, {"suffix", f.Suffix}} {
		if d.m == nil {
			continue
		}
		p := path + "." + d.name
		if len(d.m) == 0 && len(dialects) > 0 {
			errs.Warn(p, "is empty and filters nothing; remove it")
		}
		for _, k := range sortedKeys(d.m) {
			if !attributeNameRE.MatchString(k) {
				errs.Add(p+"["+k+"]", "%q is not a valid attribute name: use lowercase letters and digits, starting with a letter", k)
			}
		}
	}
	for _, l := range []struct {
		name string
		list []SubscriptionsAPIFilter
	}{{"all", f.All}, {"any", f.Any}} {
		if l.list != nil && len(l.list) == 0 && len(dialects) > 0 {
			errs.Warn(path+"."+l.name, "is empty and filters nothing; remove it")
		}
		for i := range l.list {
			validateFilter(errs, path+"."+l.name+"["+itoa(i)+"]", &l.list[i])
		}
	}
	if f.Not != nil {
		validateFilter(errs, path+".not", f.Not)
	}
	if f.CESQL != nil && *f.CESQL != "" {
		validateCESQL(errs, path+".cesql", *f.CESQL)
	} else if f.CESQL != nil && len(dialects) > 0 {
		errs.Warn(path+".cesql", "is empty and filters nothing; remove it")
	}
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
