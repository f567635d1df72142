package policy

import (
	"encoding/json"
	"path"
	"slices"
)

// Match selects objects; empty fields select every object.
type Match struct {
	APIVersions []string          `json:"apiVersion"`
	Kinds       []string          `json:"kind"`
	Namespaces  []string          `json:"namespace"`
	Labels      map[string]string `json:"labels"`
}

// UnmarshalJSON takes one value or a list of them for each of apiVersion,
// kind and namespace.
func (m *Match) UnmarshalJSON(b []byte) error {
	var raw struct {
		APIVersion oneOrMany         `json:"apiVersion"`
		Kind       oneOrMany         `json:"kind"`
		Namespace  oneOrMany         `json:"namespace"`
		Labels     map[string]string `json:"labels"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Match{APIVersions: raw.APIVersion, Kinds: raw.Kind, Namespaces: raw.Namespace, Labels: raw.Labels}
	return nil
}

type oneOrMany []string

func (o *oneOrMany) UnmarshalJSON(b []byte) error {
	var one string
	if err := json.Unmarshal(b, &one); err == nil {
		*o = []string{one}
		return nil
	}
	var many []string
	if err := json.Unmarshal(b, &many); err != nil {
		return err
	}
	*o = many
	return nil
}

// Selects reports whether the policy applies to an object. namespace is
// the object's effective namespace: knc.yaml's defaultNamespace when the
// manifest leaves it out.
func (m *Match) Selects(apiVersion, kind, namespace string, labels map[string]string) bool {
	if len(m.APIVersions) > 0 && !slices.Contains(m.APIVersions, apiVersion) {
		return false
	}
	if len(m.Kinds) > 0 && !slices.Contains(m.Kinds, kind) {
		return false
	}
	if len(m.Namespaces) > 0 && !slices.ContainsFunc(m.Namespaces, func(pattern string) bool {
		ok, err := path.Match(pattern, namespace)
		return err == nil && ok
	}) {
		return false
	}
	for k, v := range m.Labels {
		if got, ok := labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}
