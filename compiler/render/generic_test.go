package render

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/knc-dev/knc/compiler/model"
)

// TestToGenericMatchesJSON checks the converter against encoding/json on
// objects that use every kind of field the model has.
func TestToGenericMatchesJSON(t *testing.T) {
	retry := int64(3)
	ts := "2024-01-01T00:00:00Z"
	cesql := "true"
	objects := []any{
		&model.Broker{
			TypeMeta: model.TypeMeta{APIVersion: "eventing.knative.dev/v1", Kind: "Broker"},
			Metadata: model.ObjectMeta{Name: "b", Namespace: "ns", Annotations: map[string]string{"a": "b"}, Generation: 2, CreationTimestamp: &ts},
			Spec:     model.BrokerSpec{Delivery: &model.DeliverySpec{Retry: &retry, DeadLetterSink: &model.Destination{URI: ptr("http://x/")}}},
			Status:   &model.BrokerStatus{Status: model.Status{Conditions: []model.Condition{{Type: "Ready", Status: "True"}}}},
		},
		&model.Trigger{
			TypeMeta: model.TypeMeta{APIVersion: "eventing.knative.dev/v1", Kind: "Trigger"},
			Metadata: model.ObjectMeta{Name: "t"},
			Spec: model.TriggerSpec{
				Broker:  "b",
				Filter:  &model.TriggerFilter{Attributes: map[string]string{"type": "", "source": "s"}},
				Filters: []model.SubscriptionsAPIFilter{{Not: &model.SubscriptionsAPIFilter{All: []model.SubscriptionsAPIFilter{{CESQL: &cesql}}}}, {}},
			},
		},
		&model.Channel{
			TypeMeta: model.TypeMeta{APIVersion: "messaging.knative.dev/v1", Kind: "Channel"},
			Metadata: model.ObjectMeta{Name: "c", Labels: map[string]string{}},
			Spec:     model.ChannelSpec{ChannelTemplate: &model.ChannelTemplateSpec{APIVersion: "a/v1", Kind: "K", Spec: map[string]any{"n": 3, "list": []any{"x", 1.5, true, nil}}}, Subscribers: []model.SubscriberSpec{}},
		},
		&model.Subscription{TypeMeta: model.TypeMeta{APIVersion: "messaging.knative.dev/v1", Kind: "Subscription"}},
	}
	for _, o := range objects {
		b, err := json.Marshal(o)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		var want any
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, err := toGeneric(reflect.ValueOf(o))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%T (-json +toGeneric):\n%s", o, diff)
		}
	}
}

func ptr(s string) *string { return &s }
