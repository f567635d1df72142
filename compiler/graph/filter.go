package graph

import (
	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/internal/topology"
)

// TriggerFilter writes the filter a Trigger applies as one expression (see
// topology.DescribeFilter). Every dialect an entry of spec.filters sets is
// written, not only the one the runtime evaluates, so that a manifest that
// says more than Knative reads shows it.
func TriggerFilter(t *model.Trigger) string {
	var attributes map[string]string
	if t.Spec.Filter != nil {
		attributes = t.Spec.Filter.Attributes
	}
	return topology.DescribeFilter(attributes, filters(t.Spec.Filters))
}

func filters(in []model.SubscriptionsAPIFilter) []routing.Filter {
	if len(in) == 0 {
		return nil
	}
	out := make([]routing.Filter, len(in))
	for i := range in {
		out[i] = filter(&in[i])
	}
	return out
}

func filter(f *model.SubscriptionsAPIFilter) routing.Filter {
	out := routing.Filter{Exact: f.Exact, Prefix: f.Prefix, Suffix: f.Suffix, All: filters(f.All), Any: filters(f.Any)}
	if f.Not != nil {
		not := filter(f.Not)
		out.Not = &not
	}
	if f.CESQL != nil {
		out.CESQL = *f.CESQL
	}
	return out
}
