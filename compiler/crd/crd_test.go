package crd

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/validation"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	schemavalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
	"sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler/check"
	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/project"
	"github.com/knc-dev/knc/internal/cuelimit"
	"github.com/knc-dev/knc/internal/knative"
)

func internalCRD(t *testing.T, c *apiextensionsv1.CustomResourceDefinition) *apiextensions.CustomResourceDefinition {
	t.Helper()
	c = c.DeepCopy()
	c.Status.StoredVersions = []string{knative.Version}
	var out apiextensions.CustomResourceDefinition
	if err := apiextensionsv1.Convert_v1_CustomResourceDefinition_To_apiextensions_CustomResourceDefinition(c, &out, nil); err != nil {
		t.Fatal(err)
	}
	return &out
}

// TestCRDsPassAPIServerValidation runs the API server's own CRD validation:
// structural schema rules, CEL compilation and CEL cost limits.
func TestCRDsPassAPIServerValidation(t *testing.T) {
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, c := range crds {
		names = append(names, c.Name)
		for _, e := range validation.ValidateCustomResourceDefinition(context.Background(), internalCRD(t, c)) {
			t.Errorf("%s: %v", c.Name, e)
		}
	}
	want := []string{"brokers.eventing.knative.dev", "triggers.eventing.knative.dev", "channels.messaging.knative.dev", "subscriptions.messaging.knative.dev", "sequences.flows.knative.dev", "parallels.flows.knative.dev", "pingsources.sources.knative.dev"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("CRDs (-want +got):\n%s", diff)
	}
}

// crdValidator checks objects as the API server does on create and update:
// prune unknown fields, then apply the OpenAPI schema and the CEL rules.
type crdValidator struct {
	structural *structuralschema.Structural
	schema     schemavalidation.SchemaValidator
	cel        *cel.Validator
}

func newCRDValidator(t *testing.T, kind string) *crdValidator {
	t.Helper()
	crds, err := CRDs()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range crds {
		if c.Spec.Names.Kind != kind {
			continue
		}
		in := internalCRD(t, c)
		// The internal form moves a schema all versions share up to
		// spec.validation.
		props := in.Spec.Validation.OpenAPIV3Schema
		s, err := structuralschema.NewStructural(props)
		if err != nil {
			t.Fatal(err)
		}
		sv, _, err := schemavalidation.NewSchemaValidator(props)
		if err != nil {
			t.Fatal(err)
		}
		return &crdValidator{structural: s, schema: sv, cel: cel.NewValidator(s, true, celconfig.PerCallLimit)}
	}
	t.Fatalf("no CRD for %s", kind)
	return nil
}

func (v *crdValidator) validate(obj, old map[string]any) field.ErrorList {
	pruning.Prune(obj, v.structural, true)
	var errs field.ErrorList
	if old == nil {
		errs = schemavalidation.ValidateCustomResource(nil, obj, v.schema)
	} else {
		pruning.Prune(old, v.structural, true)
		errs = schemavalidation.ValidateCustomResourceUpdate(nil, obj, old, v.schema)
	}
	var oldObj any
	if old != nil {
		oldObj = old
	}
	celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, oldObj, celconfig.RuntimeCELCostBudget)
	return append(errs, celErrs...)
}

func parse(t *testing.T, doc string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// kncValid runs knc validate's checks on one manifest: the decode and check
// stages of the pipeline, which the compiler package runs, and which this
// package's tests cannot import as the pipeline renders through it.
func kncValid(t *testing.T, doc string) bool {
	t.Helper()
	loaded, err := load.Read([]load.Source{{Name: "m.yaml", Data: []byte(doc)}}, cuelimit.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, diags := check.Check(loaded.Docs, project.Default())
	// References to objects outside the manifest are not what this test is
	// about.
	for _, d := range append(loaded.Diags, diags...) {
		if d.Severity == diag.Error && !strings.Contains(d.Message, "not found in namespace") {
			return false
		}
	}
	return true
}

const (
	trigger = `apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata: {name: t, namespace: ns}
spec:
  broker: default
`
	subscription = `apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata: {name: s, namespace: ns}
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: c}
`
)

// TestSchemaRejectsWhatValidateRejects checks that the CRDs refuse invalid
// objects wherever OpenAPI and CEL can say why, and never refuse an object
// knc validate accepts, since that object could not be applied.
func TestSchemaRejectsWhatValidateRejects(t *testing.T) {
	tests := []struct {
		name, kind, doc string
		// crdRejects is false where the rule has no OpenAPI or affordable
		// CEL form; knc validate still rejects those.
		crdRejects bool
		kncValid   bool
	}{
		{"valid trigger", "Trigger", trigger + "  subscriber: {uri: 'http://example.com/'}\n", false, true},
		{"trigger with filters", "Trigger", trigger + "  subscriber: {ref: {apiVersion: v1, kind: Service, name: s}, uri: /path}\n  filters:\n  - any:\n    - exact: {type: a}\n    - not: {prefix: {source: b}}\n", false, true},
		{"subscriber needs ref or uri", "Trigger", trigger + "  subscriber: {}\n", true, false},
		{"uri without ref must be absolute", "Trigger", trigger + "  subscriber: {uri: /relative}\n", true, false},
		{"empty uri", "Trigger", trigger + "  subscriber: {uri: ''}\n", true, false},
		{"bad broker name, a warning", "Trigger", "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: t}\nspec:\n  broker: Not_A_Name\n  subscriber: {uri: 'http://x/'}\n", false, true},
		{"missing broker", "Trigger", "apiVersion: eventing.knative.dev/v1\nkind: Trigger\nmetadata: {name: t}\nspec:\n  subscriber: {uri: 'http://x/'}\n", true, false},
		{"bad attribute name", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filter: {attributes: {Type: a}}\n", true, false},
		{"two dialects in one filter", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - {exact: {type: a}, prefix: {type: b}}\n", false, false},
		{"no dialect, a warning", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - {}\n", false, true},
		{"nested filter with two dialects", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - all:\n    - {exact: {type: a}, suffix: {type: b}}\n", false, false},
		{"exact with two attributes", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - exact: {type: a, source: b}\n", false, true},
		{"empty all, a warning", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - all: []\n", false, true},
		{"bad backoff policy", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  delivery: {backoffPolicy: random}\n", true, false},
		{"negative retry", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  delivery: {retry: -1}\n", true, false},
		{"duration P", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  delivery: {backoffDelay: P}\n", true, false},
		{"duration ending in T", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  delivery: {backoffDelay: P1DT}\n", false, true},
		{"duration not ISO", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  delivery: {backoffDelay: 5s}\n", true, false},
		{"attribute name inside filters", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - exact: {Type: a}\n", false, false},
		{"cesql that does not parse", "Trigger", trigger + "  subscriber: {uri: 'http://x/'}\n  filters:\n  - cesql: 'type = '\n", false, false},
		{"valid subscription", "Subscription", subscription + "  subscriber: {uri: 'http://x/'}\n", false, true},
		{"subscription needs a subscriber", "Subscription", subscription, true, false},
		{"subscription reply only", "Subscription", subscription + "  reply: {uri: 'http://x/'}\n", true, false},
		{"channel ref without kind", "Subscription", "apiVersion: messaging.knative.dev/v1\nkind: Subscription\nmetadata: {name: s}\nspec:\n  channel: {apiVersion: messaging.knative.dev/v1, name: c}\n  subscriber: {uri: 'http://x/'}\n", true, false},
		{"broker with empty config", "Broker", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b}\nspec: {config: {}}\n", false, false}, // the CRD's own default
		{"broker config without name", "Broker", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b}\nspec: {config: {apiVersion: v1, kind: ConfigMap}}\n", true, false},
		{"channel template without kind", "Channel", "apiVersion: messaging.knative.dev/v1\nkind: Channel\nmetadata: {name: c}\nspec: {channelTemplate: {apiVersion: messaging.knative.dev/v1}}\n", true, false},
		{"channel template spec is open", "Channel", "apiVersion: messaging.knative.dev/v1\nkind: Channel\nmetadata: {name: c}\nspec: {channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel, spec: {anything: [1, 2]}}}\n", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := newCRDValidator(t, tt.kind).validate(parse(t, tt.doc), nil)
			if got := len(errs) > 0; got != tt.crdRejects {
				t.Errorf("CRD rejects = %v, want %v; errors: %v", got, tt.crdRejects, errs)
			}
			if got := kncValid(t, tt.doc); got != tt.kncValid {
				t.Errorf("knc validate accepts = %v, want %v", got, tt.kncValid)
			}
			if len(errs) > 0 && tt.kncValid {
				t.Errorf("the CRD refuses an object knc validate accepts: %v", errs)
			}
		})
	}
}

// TestBrokerConfigDefault: the API server populates spec.config of a Broker
// created without one, as the control-plane contract requires
// (knative-eventing-control-plane.md, Broker Lifecycle), and keeps the one
// a manifest sets.
func TestBrokerConfigDefault(t *testing.T) {
	tests := []struct {
		name, doc string
		want      map[string]any
	}{
		{"no spec", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b}\n", map[string]any{"config": map[string]any{}}},
		{"spec without config", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b}\nspec: {delivery: {retry: 1}}\n",
			map[string]any{"config": map[string]any{}, "delivery": map[string]any{"retry": float64(1)}}},
		{"config set", "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b}\nspec: {config: {apiVersion: v1, kind: ConfigMap, name: c}}\n",
			map[string]any{"config": map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "c"}}},
	}
	v := newCRDValidator(t, "Broker")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			obj := parse(t, tt.doc)
			structuraldefaulting.Default(obj, v.structural)
			if diff := cmp.Diff(tt.want, obj["spec"]); diff != "" {
				t.Errorf("spec after defaulting (-want +got):\n%s", diff)
			}
			if errs := v.validate(obj, nil); len(errs) > 0 {
				t.Errorf("the defaulted Broker is refused: %v", errs)
			}
		})
	}
}

// TestStatusDefault checks that an object the runtime has not reported on
// reads back with status.observedGeneration 0, which kstatus and the Argo
// CD health check take for not yet observed, and that a status the runtime
// wrote is left alone.
func TestStatusDefault(t *testing.T) {
	for _, k := range knative.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			v := newCRDValidator(t, k.Name)
			bare := parse(t, "apiVersion: "+k.Group+"/v1\nkind: "+k.Name+"\nmetadata: {name: x}\n")
			structuraldefaulting.Default(bare, v.structural)
			if diff := cmp.Diff(map[string]any{"observedGeneration": int64(0)}, bare["status"]); diff != "" {
				t.Errorf("status of a new %s (-want +got):\n%s", k.Name, diff)
			}
			reported := parse(t, "apiVersion: "+k.Group+"/v1\nkind: "+k.Name+"\nmetadata: {name: x}\nstatus: {observedGeneration: 3}\n")
			structuraldefaulting.Default(reported, v.structural)
			if diff := cmp.Diff(map[string]any{"observedGeneration": float64(3)}, reported["status"]); diff != "" {
				t.Errorf("status the runtime wrote (-want +got):\n%s", diff)
			}
		})
	}
}

// TestImmutableFields checks the transition rules on updates.
func TestImmutableFields(t *testing.T) {
	broker := func(config string) string {
		return "apiVersion: eventing.knative.dev/v1\nkind: Broker\nmetadata: {name: b}\nspec: {" + config + "}\n"
	}
	channel := func(template string) string {
		return "apiVersion: messaging.knative.dev/v1\nkind: Channel\nmetadata: {name: c}\nspec: {" + template + "}\n"
	}
	tests := []struct {
		name, kind, old, new string
		wantRefused          bool
	}{
		{"broker config unchanged", "Broker", broker("config: {apiVersion: v1, kind: ConfigMap, name: c}, delivery: {retry: 1}"), broker("config: {apiVersion: v1, kind: ConfigMap, name: c}, delivery: {retry: 2}"), false},
		{"broker config changed", "Broker", broker("config: {apiVersion: v1, kind: ConfigMap, name: c}"), broker("config: {apiVersion: v1, kind: ConfigMap, name: d}"), true},
		{"broker config removed", "Broker", broker("config: {apiVersion: v1, kind: ConfigMap, name: c}"), broker(""), true},
		{"trigger broker unchanged", "Trigger", trigger + "  subscriber: {uri: 'http://a/'}\n", trigger + "  subscriber: {uri: 'http://b/'}\n", false},
		{"trigger broker changed", "Trigger", trigger + "  subscriber: {uri: 'http://a/'}\n", strings.Replace(trigger, "broker: default", "broker: other", 1) + "  subscriber: {uri: 'http://a/'}\n", true},
		{"subscription channel changed", "Subscription", subscription + "  subscriber: {uri: 'http://a/'}\n", strings.Replace(subscription, "name: c}", "name: d}", 1) + "  subscriber: {uri: 'http://a/'}\n", true},
		{"subscription subscriber changed", "Subscription", subscription + "  subscriber: {uri: 'http://a/'}\n", subscription + "  subscriber: {uri: 'http://b/'}\n", false},
		{"channel template changed", "Channel", channel("channelTemplate: {apiVersion: messaging.knc.dev/v1alpha1, kind: JetStreamChannel}"), channel("channelTemplate: {apiVersion: messaging.knative.dev/v1, kind: InMemoryChannel}"), true},
		{"channel template removed", "Channel", channel("channelTemplate: {apiVersion: messaging.knc.dev/v1alpha1, kind: JetStreamChannel}"), channel(""), true},
		{"channel delivery changed", "Channel", channel("channelTemplate: {apiVersion: a/v1, kind: K}"), channel("channelTemplate: {apiVersion: a/v1, kind: K}, delivery: {retry: 3}"), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := newCRDValidator(t, tt.kind)
			errs := v.validate(parse(t, tt.new), parse(t, tt.old))
			if got := len(errs) > 0; got != tt.wantRefused {
				t.Errorf("refused = %v, want %v; errors: %v", got, tt.wantRefused, errs)
			}
		})
	}
}

func TestOpenAPIDocument(t *testing.T) {
	doc, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	var parsed struct {
		OpenAPI    string `json:"openapi"`
		Components struct {
			Schemas map[string]map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := yaml.Unmarshal(doc, &parsed); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for k, s := range parsed.Components.Schemas {
		kinds = append(kinds, k)
		if s["type"] != "object" {
			t.Errorf("%s: type = %v, want object", k, s["type"])
		}
	}
	if diff := cmp.Diff([]string{"Broker", "Channel", "Parallel", "PingSource", "Sequence", "Subscription", "Trigger"}, sorted(kinds)); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	again, err := OpenAPI()
	if err != nil {
		t.Fatal(err)
	}
	if string(again) != string(doc) {
		t.Error("OpenAPI is not deterministic")
	}
}

func sorted(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
