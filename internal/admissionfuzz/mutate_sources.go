package admissionfuzz

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// sourceValues are, per field of the sources and flows (indices written
// []), values on both sides of what Knative's validation of the field
// accepts: cron schedules and descriptors, time zones, JSON and not JSON,
// base64 and not, event modes, group versions, extension names.
var sourceValues = map[string][]string{
	"spec.schedule": {
		"* * * * *", "*/5 * * * *", "0 0 1 1 *", "@hourly", "@daily", "@midnight", "@yearly", "@annually", "@weekly", "@monthly",
		"@every 1m", "@every 10s", "@reboot", "@often", "0 0 31 2 *", "60 * * * *", "* 24 * * *", "* * * *", "*/0 * * * *",
		"1 2 3 4 5 6", "1 2 3 4 5 6 7", "", " ", "0 9 * * MON-FRI", "0 9 * * 7", "0 9 * * 8", "0 9 * jan *", "0 9 * JAN-DEC SUN",
		"CRON_TZ=UTC * * * * *", "TZ=Europe/Paris 0 * * * *", "CRON_TZ=Mars/Olympus * * * * *", "H * * * *", "0 0 ? * *",
		"0-59/15 * * * *", "5-1 * * * *", "a b c d e", "*/2 * * * * *",
	},
	"spec.timezone": {
		"UTC", "Europe/Paris", "America/New_York", "Asia/Kolkata", "Mars/Olympus", "utc", "Local", "EST", "GMT+1",
		"Etc/GMT+1", "europe/paris", " UTC", "Europe/", "../etc/passwd", "",
	},
	"spec.contentType": {
		"application/json", "text/plain", "application/xml", "", "application/JSON", "application/json; charset=utf-8", "json",
	},
	"spec.data": {
		`{"a": 1}`, "not json", "[1, 2]", `""`, "{}", "null", "1", `{"a": `, "true", " {} ", "{\"a\": \"é\"}",
	},
	"spec.dataBase64": {
		"eyJhIjogMX0=", "bm90IGpzb24=", "!!!", "eyJhIjogMX0", "W10=", "e30=", "bnVsbA==", "e30", "e30=\n", "ZQ==", "=",
	},
	"spec.mode":                             {"Reference", "Resource", "reference", "resource", "Ref", "", "Resources"},
	"spec.resources[].apiVersion":           {"v1", "apps/v1", "a/b/c", "/v1", "apps/", "Apps/V1", "", "example.com/v1alpha1", "v1/"},
	"spec.resources[].kind":                 {"Pod", " ", "", "pod", "Pod "},
	"spec.owner.apiVersion":                 {"v1", "apps/v1", "a/b/c", "/v1", ""},
	"spec.owner.kind":                       {"ReplicaSet", "", " "},
	"spec.serviceAccountName":               {"default", "", "Events", "a_b"},
	"spec.subject.apiVersion":               {"apps/v1", "v1", "", "apps/v1/x", "Apps/v1", "a b"},
	"spec.subject.kind":                     {"Deployment", "", "Deploy-ment", "deployment", "1Job", "Job_2"},
	"spec.subject.name":                     {"heartbeat", "", "Heartbeat", "a.b", "a-b"},
	"spec.subject.namespace":                {"team-a", "default", "", "other", "Team-A"},
	"spec.template.spec.containers[].name":  {"beat", "", "Beat", "a_b"},
	"spec.template.spec.containers[].image": {"registry.example.com/x:1", "", " "},
	"spec.channelTemplate.apiVersion":       {"messaging.knative.dev/v1", "", "v1"},
	"spec.channelTemplate.kind":             {"InMemoryChannel", "", "Channel"},
}

// kindFields are the fields of sourceValues each kind has.
var kindFields = map[string][]string{
	"PingSource":      {"spec.schedule", "spec.timezone", "spec.contentType", "spec.data", "spec.dataBase64"},
	"ApiServerSource": {"spec.mode", "spec.resources[].apiVersion", "spec.resources[].kind", "spec.owner.apiVersion", "spec.owner.kind", "spec.serviceAccountName"},
	"ContainerSource": {"spec.template.spec.containers[].name", "spec.template.spec.containers[].image"},
	"SinkBinding":     {"spec.subject.apiVersion", "spec.subject.kind", "spec.subject.name", "spec.subject.namespace"},
	"Sequence":        {"spec.channelTemplate.apiVersion", "spec.channelTemplate.kind"},
	"Parallel":        {"spec.channelTemplate.apiVersion", "spec.channelTemplate.kind"},
}

// apiServerFilters are values of an ApiServerSource's spec.filters.
var apiServerFilters = []string{
	"[{exact: {type: dev.knative.apiserver.resource.add}}]", "[]", "[{cesql: \"source LIKE '%a%'\"}]",
	"[{cesql: 'type ='}]", "[{exact: {Type: a}}]", "[{}]", "[{exact: {type: a}, prefix: {source: b}}]",
}

// sourceExtensionKeys are CloudEvent extension names, valid and not.
var sourceExtensionKeys = []string{"abc", "a1", "A1", "ABC", "a-b", "a_b", "", "é", "type", "a b", "knativearrivaltime", strings.Repeat("a", 21)}

// applySourceValue sets one of the fields sourceValues lists, or a
// CloudEvent extension name, to a value Knative's validation of it
// decides on; a field the case lacks is added beside its siblings.
func applySourceValue(r *rand.Rand, c *Case) (Mutation, bool) {
	m := Mutation{Op: "source"}
	if c.Kind == "ApiServerSource" && r.IntN(6) == 0 {
		spec := mappingValue(c.Doc, "spec")
		if spec == nil || spec.Kind != yaml.MappingNode || c.touched(spec) || mappingValue(spec, "filters") != nil {
			return m, false
		}
		var v yaml.Node
		body := pick(r, apiServerFilters)
		if err := yaml.Unmarshal([]byte(body), &v); err != nil {
			panic(err)
		}
		k := str("filters")
		spec.Content = append(spec.Content, k, v.Content[0])
		c.mutated = append(c.mutated, k, v.Content[0])
		m.Path, m.Detail = "spec.filters", "added as "+body
		return m, true
	}
	if (strings.HasSuffix(c.Kind, "Source") || c.Kind == "SinkBinding") && r.IntN(6) == 0 {
		spec := mappingValue(c.Doc, "spec")
		if spec == nil || spec.Kind != yaml.MappingNode || c.touched(spec) && mappingValue(spec, "ceOverrides") == nil {
			return m, false
		}
		ce := mappingValue(spec, "ceOverrides")
		if ce == nil {
			ce = mapping()
			spec.Content = append(spec.Content, str("ceOverrides"), ce)
		}
		if ce.Kind != yaml.MappingNode || c.touched(ce) {
			return m, false
		}
		ext := mappingValue(ce, "extensions")
		if ext == nil {
			ext = mapping()
			ce.Content = append(ce.Content, str("extensions"), ext)
		}
		if ext.Kind != yaml.MappingNode {
			return m, false
		}
		key := pick(r, sourceExtensionKeys)
		k, v := str(key), str("value")
		ext.Content = append(ext.Content, k, v)
		c.mutated = append(c.mutated, k, v)
		m.Path, m.Detail = "spec.ceOverrides.extensions."+key, "added"
		return m, true
	}
	type place struct {
		field  string
		parent *yaml.Node
		key    string
		s      *site
	}
	var places []place
	for _, s := range sites(c.Doc) {
		norm := indexRE.ReplaceAllString(s.path, "[]")
		if _, ok := sourceValues[norm]; ok && s.parent != nil && !c.touched(s.node) {
			places = append(places, place{field: norm, s: &s})
		}
		if s.node.Kind != yaml.MappingNode || c.touched(s.node) {
			continue
		}
		// A field of the kind that this mapping could hold but lacks.
		for _, field := range kindFields[c.Kind] {
			parent, key := splitLast(field)
			if parent == norm && mappingValue(s.node, key) == nil {
				places = append(places, place{field: field, parent: s.node, key: key})
			}
		}
	}
	if len(places) == 0 {
		return m, false
	}
	// The map's order is random; the sites' is not.
	slices.SortStableFunc(places, func(a, b place) int { return strings.Compare(a.field, b.field) })
	p := pick(r, places)
	value := pick(r, sourceValues[p.field])
	v := str(value)
	if p.s != nil {
		c.replace(*p.s, v)
		m.Path, m.Detail = p.s.path, fmt.Sprintf("%q spelt %q", p.s.node.Value, value)
		return m, true
	}
	k := str(p.key)
	p.parent.Content = append(p.parent.Content, k, v)
	c.mutated = append(c.mutated, k, v)
	m.Path, m.Detail = p.field, fmt.Sprintf("added as %q", value)
	return m, true
}

func splitLast(path string) (parent, key string) {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i], path[i+1:]
	}
	return "", path
}
