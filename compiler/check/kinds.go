package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/agnivade/levenshtein"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/knative"
)

// knativeAPI lists, per API group of Knative Eventing, the kinds its CRDs
// define and the versions they serve (knative/eventing config/core/resources
// and config/channels). knc validates Brokers, Triggers, Channels and
// Subscriptions; it loads the other kinds as reference targets. An object in
// one of these groups with a kind or version not listed here would be
// refused by the API server.
var knativeAPI = map[string]map[string][]string{
	knative.GroupEventing: {
		knative.KindBroker: {knative.Version}, knative.KindTrigger: {knative.Version},
		"EventType":      {"v1beta1", "v1beta2", "v1beta3"},
		"EventPolicy":    {"v1alpha1"},
		"EventTransform": {"v1alpha1"},
		"RequestReply":   {"v1alpha1"},
	},
	knative.GroupMessaging: {
		knative.KindChannel: {knative.Version}, knative.KindSubscription: {knative.Version}, knative.KindInMemoryChannel: {"v1"},
	},
	"flows.knative.dev": {
		"Sequence": {"v1"}, "Parallel": {"v1"},
	},
	"sources.knative.dev": {
		"ApiServerSource": {"v1"}, "ContainerSource": {"v1"}, "PingSource": {"v1", "v1beta2"},
		"SinkBinding": {"v1"}, "IntegrationSource": {"v1alpha1"},
	},
	"sinks.knative.dev": {
		"JobSink": {"v1alpha1"}, "IntegrationSink": {"v1alpha1"},
	},
}

// checkKnativeKind says what is wrong with apiVersion and kind when the
// group is one of Knative's: a kind the group does not define, a kind of
// another Knative group, or a version the kind does not serve.
func checkKnativeKind(apiVersion, kind string) (path, problem string) {
	group, version, _ := strings.Cut(apiVersion, "/")
	kinds, ok := knativeAPI[group]
	if !ok {
		return "", ""
	}
	if versions, ok := kinds[kind]; ok {
		if slices.Contains(versions, version) {
			return "", ""
		}
		return "apiVersion", fmt.Sprintf("%s %s is not served; use %s", apiVersion, kind, joinVersions(group, versions))
	}
	for g, ks := range knativeAPI {
		if versions, ok := ks[kind]; ok && g != group {
			return "apiVersion", fmt.Sprintf("%s is a kind of %s, not of %s; use apiVersion: %s/%s", kind, g, group, g, versions[len(versions)-1])
		}
	}
	names := make([]string, 0, len(kinds))
	for k := range kinds {
		names = append(names, k)
	}
	slices.Sort(names)
	msg := fmt.Sprintf("%s defines no kind %q; its kinds are %s", group, kind, strings.Join(names, ", "))
	if best := closest(kind, names); best != "" {
		msg += fmt.Sprintf("; did you mean %q?", best)
	}
	return "kind", msg
}

func joinVersions(group string, versions []string) string {
	out := make([]string, len(versions))
	for i, v := range versions {
		out[i] = group + "/" + v
	}
	return strings.Join(out, " or ")
}

// closest returns the candidate nearest to name, if one is near enough to
// be a misspelling of it, such as Triger or trigger for Trigger.
func closest(name string, candidates []string) string {
	best, bestDist := "", -1
	for _, c := range candidates {
		if !closeEnough(name, c) {
			continue
		}
		if d := levenshtein.ComputeDistance(strings.ToLower(name), strings.ToLower(c)); bestDist < 0 || d < bestDist {
			best, bestDist = c, d
		}
	}
	return best
}

func closeEnough(a, b string) bool {
	a, b = strings.ToLower(a), strings.ToLower(b)
	if a == b {
		return true
	}
	limit := 2
	if n := min(len(a), len(b)); n <= 4 {
		limit = 1
	}
	return levenshtein.ComputeDistance(a, b) <= limit
}

// similarName names an object of key's kind in key's namespace whose name
// is close to key's, for a reference that does not resolve.
func similarName(set *model.Set, key model.Key) string {
	var names []string
	for k := range set.Index {
		if k.Group == key.Group && k.Kind == key.Kind && k.Namespace == key.Namespace {
			names = append(names, k.Name)
		}
	}
	slices.Sort(names)
	return closest(key.Name, names)
}
