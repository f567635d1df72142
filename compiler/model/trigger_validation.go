package model

import "sort"

// Validate checks one Trigger on its own.
func (t *Trigger) Validate(f Features) FieldErrors {
	var errs FieldErrors
	validateMeta(&errs, &t.Metadata)
	s := &t.Spec
	validateName(&errs, "spec.broker", s.Broker)
	if s.Filter != nil {
		for _, k := range sortedKeys(s.Filter.Attributes) {
			if !attributeNameRE.MatchString(k) {
				errs.Add("spec.filter.attributes["+k+"]", "%q is not a valid attribute name: use lowercase letters and digits, starting with a letter", k)
			}
		}
	}
	if s.Filters != nil {
		f.require(&errs, "spec.filters", FeatureNewTriggerFilters)
		for i := range s.Filters {
			validateFilter(&errs, "spec.filters["+itoa(i)+"]", &s.Filters[i])
		}
	}
	validateDestination(&errs, "spec.subscriber", &s.Subscriber)
	if s.Delivery != nil {
		validateDelivery(&errs, "spec.delivery", s.Delivery, f)
	}
	if t.Status != nil {
		validateStatus(&errs, "status", &t.Status.Status)
	}
	return errs
}

func validateFilter(errs *FieldErrors, path string, f *SubscriptionsAPIFilter) {
	var dialects []string
	for _, d := range []struct {
		name string
		set  bool
	}{
		{"exact", f.Exact != nil}, {"prefix", f.Prefix != nil}, {"suffix", f.Suffix != nil},
		{"all", f.All != nil}, {"any", f.Any != nil}, {"not", f.Not != nil}, {"cesql", f.CESQL != nil},
	} {
		if d.set {
			dialects = append(dialects, d.name)
		}
	}
	switch len(dialects) {
	case 0:
		errs.Add(path, "needs exactly one dialect: exact, prefix, suffix, all, any, not or cesql")
		return
	case 1:
	default:
		errs.Add(path, "has %d dialects (%s); use exactly one per entry, and combine entries with all or any", len(dialects), joinQuoted(dialects))
		return
	}
	for name, m := range map[string]map[string]string{"exact": f.Exact, "prefix": f.Prefix, "suffix": f.Suffix} {
		if m == nil {
			continue
		}
		p := path + "." + name
		switch len(m) {
		case 0:
			errs.Add(p, "is empty and filters nothing; give one attribute and value, such as {type: com.example.created}")
		case 1:
		default:
			errs.Add(p, "has %d attributes; give exactly one per entry, and list several entries to require them all", len(m))
		}
		for _, k := range sortedKeys(m) {
			if !attributeNameRE.MatchString(k) {
				errs.Add(p+"["+k+"]", "%q is not a valid attribute name: use lowercase letters and digits, starting with a letter", k)
			}
		}
	}
	if f.All != nil && len(f.All) == 0 {
		errs.Add(path+".all", "is empty; give at least one filter")
	}
	if f.Any != nil && len(f.Any) == 0 {
		errs.Add(path+".any", "is empty; give at least one filter")
	}
	for i := range f.All {
		validateFilter(errs, path+".all["+itoa(i)+"]", &f.All[i])
	}
	for i := range f.Any {
		validateFilter(errs, path+".any["+itoa(i)+"]", &f.Any[i])
	}
	if f.Not != nil {
		validateFilter(errs, path+".not", f.Not)
	}
	if f.CESQL != nil {
		validateCESQL(errs, path+".cesql", *f.CESQL)
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

func joinQuoted(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}
