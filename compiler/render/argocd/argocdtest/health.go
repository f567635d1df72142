// Package argocdtest runs knc's Argo CD health check as Argo CD runs it,
// with gopher-lua, so that tests can check it against real objects. It is
// apart from package argocd so that the Lua interpreter, which only tests
// use, is linked into no binary.
package argocdtest

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/knc-dev/knc/compiler/render/argocd"
)

// Health is what the script returns.
type Health struct {
	Status  string
	Message string
}

// Evaluate runs the health script on obj, a Kubernetes object as JSON
// decodes it, the way Argo CD runs a resource.customizations.health script
// (util/lua/lua.go in argoproj/argo-cd, VM.ExecuteHealthLua; the contract
// is documented in docs/operator-manual/health.md): obj is a global table,
// only Lua's base, package and table libraries are loaded (string, math and
// io are not, unless a user turns on useOpenLibs), the script has one
// second, and it returns a table whose status must be one of Argo CD's
// health codes; any other status is reported as Unknown. Argo CD also
// loads a reduced os library (time and date, no processes or files);
// Evaluate leaves it out, so a script that calls os fails here although
// Argo CD would run it: health.lua must not call it.
func Evaluate(obj map[string]any) (Health, error) {
	return evaluate(argocd.HealthLua, obj)
}

// healthCodes are the statuses Argo CD accepts from a health script.
var healthCodes = map[string]bool{"Healthy": true, "Progressing": true, "Degraded": true, "Suspended": true, "Missing": true, "Unknown": true}

// invalidHealth is what Argo CD reports for a status outside healthCodes.
var invalidHealth = Health{Status: "Unknown", Message: "Lua returned an invalid health status"}

func evaluate(script string, obj map[string]any) (Health, error) {
	L := lua.NewState(lua.Options{SkipOpenLibs: true})
	defer L.Close()
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{
		{lua.LoadLibName, lua.OpenPackage},
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.open), Protect: true}, lua.LString(lib.name)); err != nil {
			return Health{}, fmt.Errorf("opening Lua's %s library: %w", lib.name, err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	L.SetContext(ctx)
	// Go through JSON so that every number is a float64, as Argo CD sees it.
	b, err := json.Marshal(obj)
	if err != nil {
		return Health{}, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return Health{}, err
	}
	L.SetGlobal("obj", toLua(L, generic))
	if err := L.DoString(script); err != nil {
		return Health{}, fmt.Errorf("running the health check: %w", err)
	}
	ret, ok := L.Get(-1).(*lua.LTable)
	if !ok {
		return Health{}, fmt.Errorf("the health check returned %s, not a table", L.Get(-1).Type())
	}
	h := Health{Status: lua.LVAsString(ret.RawGetString("status")), Message: lua.LVAsString(ret.RawGetString("message"))}
	if !healthCodes[h.Status] {
		return invalidHealth, nil
	}
	return h, nil
}

func toLua(L *lua.LState, v any) lua.LValue {
	switch x := v.(type) {
	case nil:
		return lua.LNil
	case bool:
		return lua.LBool(x)
	case float64:
		return lua.LNumber(x)
	case string:
		return lua.LString(x)
	case []any:
		t := L.NewTable()
		for _, e := range x {
			t.Append(toLua(L, e))
		}
		return t
	case map[string]any:
		t := L.NewTable()
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			t.RawSetString(k, toLua(L, x[k]))
		}
		return t
	}
	return lua.LString(fmt.Sprint(v))
}
