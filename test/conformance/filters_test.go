package conformance

import (
	"fmt"
	"slices"
	"sort"
	"testing"
)

// TestNewTriggerFilters runs the filter features of
// test/rekt/features/new_trigger_filters/feature.go that use one attribute
// per exact, prefix or suffix entry: each Trigger gets the events of the
// feature and must receive exactly those it marks shouldDeliver.
func TestNewTriggerFilters(t *testing.T) {
	type feature struct {
		name    string
		filters string // YAML under spec.filters
		deliver []string
		skip    []string
	}
	features := []feature{{
		// AllFilterFeature.
		name: "all",
		filters: "  - all:\n    - exact:\n        type: exact.prefix.suffix.event.type\n    - prefix:\n        type: exact.prefix\n" +
			"    - suffix:\n        type: suffix.event.type\n    - cesql: \"type LIKE 'exact.prefix.suffix%'\"\n",
		deliver: []string{"exact.prefix.suffix.event.type"},
		skip:    []string{"not.event.type", "exact.prefix.suffix.event", "exact.prefix.suffix.event.suffix.event.type"},
	}, {
		// AnyFilterFeature.
		name: "any",
		filters: "  - any:\n    - exact:\n        type: exact.event.type\n    - prefix:\n        type: prefix\n    - suffix:\n        type: suffix\n" +
			"    - not:\n        prefix:\n          type: not.event\n    - cesql: \"type = 'cesql.event.type'\"\n",
		deliver: []string{"exact.event.type", "prefix.event.type", "event.type.suffix", "not.type.event", "cesql.event.type"},
		skip:    []string{"not.event.type"},
	}, {
		// AnyFilterMultipleExactFiltersFeature.
		name: "any-exact",
		filters: "  - any:\n    - exact:\n        type: dev.knative.apiserver.resource.update\n    - exact:\n        type: dev.knative.apiserver.resource.add\n" +
			"    - exact:\n        type: dev.knative.apiserver.resource.delete\n",
		deliver: []string{"dev.knative.apiserver.resource.update", "dev.knative.apiserver.resource.add", "dev.knative.apiserver.resource.delete"},
		skip:    []string{"prefix.event.type"},
	}}
	sub := newRecorder(t)
	manifests := ""
	for _, f := range features {
		manifests += fmt.Sprintf("apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata:\n  name: %s\n  namespace: %s\n---\n", f.name, namespace)
		manifests += triggerManifest(f.name, f.name, uri(sub.url("/"+f.name)), "  filters:\n"+f.filters)
	}
	k := runManifests(t, manifests)
	for _, f := range features {
		t.Run(f.name, func(t *testing.T) {
			for _, typ := range slices.Concat(f.deliver, f.skip) {
				h := binary("1.0", f.name+"/"+typ)
				h.Set("Ce-Type", typ)
				mustAccept(t, k.BrokerURL(namespace, f.name), h, "{}")
			}
			n := float64(len(f.deliver))
			awaitSettled(t, k, map[string]outcomes{"trigger/" + f.name: {Accepted: n, Delivered: n}})
			var got, want []string
			for _, q := range sub.at("/" + f.name) {
				got = append(got, q.Header.Get("Ce-Type"))
			}
			want = append(want, f.deliver...)
			sort.Strings(got)
			sort.Strings(want)
			if !slices.Equal(got, want) {
				t.Errorf("delivered %v, want %v", got, want)
			}
		})
	}
}
