package argocdtest

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func object(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The objects are shaped as knc's runtime writes them; test/cluster runs
// the script on objects read back from a real API server.
func TestEvaluate(t *testing.T) {
	tests := []struct {
		name, obj string
		want      Health
	}{
		{"ready", `{"kind":"Broker","metadata":{"generation":2},"status":{"observedGeneration":2,"conditions":[
			{"type":"Addressable","status":"True","reason":"AddressSet"},
			{"type":"Ready","status":"True","reason":"Ready","message":"broker is ready"}]}}`,
			Health{"Healthy", "Ready: broker is ready"}},
		{"not compiled", `{"kind":"Trigger","metadata":{"generation":3},"status":{"observedGeneration":3,"conditions":[
			{"type":"Ready","status":"False","reason":"NotCompiled","message":"run knc build"}]}}`,
			Health{"Degraded", "NotCompiled: run knc build"}},
		{"provisioning", `{"kind":"Channel","metadata":{"generation":1},"status":{"observedGeneration":1,"conditions":[
			{"type":"Ready","status":"Unknown","reason":"Provisioning"}]}}`,
			Health{"Progressing", "Provisioning"}},
		{"generation not observed", `{"kind":"Trigger","metadata":{"generation":4},"status":{"observedGeneration":3,"conditions":[
			{"type":"Ready","status":"True","reason":"Ready"}]}}`,
			Health{"Progressing", "Waiting for knc's runtime to observe generation 4"}},
		{"no status", `{"kind":"Subscription","metadata":{"generation":1}}`,
			Health{"Progressing", "Waiting for knc's runtime to report a status"}},
		{"no Ready condition", `{"kind":"Subscription","metadata":{"generation":1},"status":{"observedGeneration":1}}`,
			Health{"Progressing", "Waiting for the Ready condition"}},
		{"being deleted", `{"kind":"Broker","metadata":{"generation":1,"deletionTimestamp":"2026-01-01T00:00:00Z"},"status":{"observedGeneration":1,"conditions":[{"type":"Ready","status":"True"}]}}`,
			Health{"Progressing", "Being deleted"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Evaluate(object(t, tt.obj))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}

// TestArgoCDContract checks the Lua set-up against the contract Argo CD
// documents for health scripts (docs/operator-manual/health.md in
// argoproj/argo-cd) and implements in util/lua/lua.go: the object is the
// global obj, the base and table libraries are there and string is not,
// the returned table's status must be a health code, a script that loops
// is stopped.
func TestArgoCDContract(t *testing.T) {
	obj := object(t, `{"kind":"Widget","metadata":{"name":"w"},"status":{"phase":"Up","items":[1,2]}}`)
	tests := []struct {
		name, script string
		want         Health
		wantErr      string
	}{
		{"obj is the object", `return {status = "Healthy", message = obj.metadata.name .. " " .. obj.status.phase}`, Health{"Healthy", "w Up"}, ""},
		{"numbers are Lua numbers", `return {status = "Progressing", message = tostring(obj.status.items[2] + 1)}`, Health{"Progressing", "3"}, ""},
		{"table library", `local t = {} table.insert(t, "a") return {status = "Degraded", message = t[1]}`, Health{"Degraded", "a"}, ""},
		{"a global hs, as the documented examples write it", `hs = {} hs.status = "Suspended" hs.message = "paused" return hs`, Health{"Suspended", "paused"}, ""},
		{"invalid status", `return {status = "Fine"}`, invalidHealth, ""},
		{"no string library", `return {status = string.upper("healthy")}`, Health{}, "string"},
		{"not a table", `return "Healthy"`, Health{}, "not a table"},
		{"stopped after a second", `while true do end`, Health{}, "context deadline exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := evaluate(tt.script, obj)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("health (-want +got):\n%s", diff)
			}
		})
	}
}
