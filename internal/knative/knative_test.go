package knative

import "testing"

func TestKindLabel(t *testing.T) {
	tests := []struct {
		group, kind, want string
	}{
		{"", "Service", "Service"},
		{"eventing.knative.dev", "Broker", "Broker"},
		{"messaging.knative.dev", "InMemoryChannel", "InMemoryChannel"},
		{"serving.knative.dev", "Service", "Service.serving.knative.dev"},
		{"messaging.knative.dev.example.com", "Channel", "Channel.messaging.knative.dev.example.com"},
	}
	for _, tt := range tests {
		if got := KindLabel(tt.group, tt.kind); got != tt.want {
			t.Errorf("KindLabel(%q, %q) = %q, want %q", tt.group, tt.kind, got, tt.want)
		}
	}
}

func TestLookup(t *testing.T) {
	for _, k := range Kinds {
		got, ok := Lookup(k.Name)
		if !ok || got.Name != k.Name || got.Group != k.Group {
			t.Errorf("Lookup(%q) = %+v, %v", k.Name, got, ok)
		}
	}
	if k, ok := Lookup("InMemoryChannel"); ok {
		t.Errorf("Lookup(InMemoryChannel) = %+v, true; want false: not one of the four kinds", k)
	}
	if got, want := Kinds[2].APIVersion(), "messaging.knative.dev/v1"; got != want {
		t.Errorf("Channel APIVersion() = %q, want %q", got, want)
	}
}
