package layers

import (
	"slices"
	"strings"
	"testing"
)

// testOnly are the modules only tests may link: the Lua interpreter that
// runs the Argo CD health check, the browser driver, and Flux's libraries
// the Flux tests apply with.
var testOnly = []string{
	"github.com/yuin/gopher-lua",
	"github.com/chromedp/",
	"github.com/fluxcd/pkg/ssa",
	"github.com/fluxcd/cli-utils",
}

// notInTheRuntime are what the runtime's own binary must not link: the
// compiler and what only the compiler needs (CUE, kustomize), and
// Graphviz, whose WebAssembly module is compiled at every start of a
// binary that links it.
var notInTheRuntime = []string{
	"cuelang.org/",
	"sigs.k8s.io/kustomize/",
	"github.com/goccy/go-graphviz",
	"github.com/yuin/gopher-lua",
	"github.com/fluxcd/pkg/kustomize",
	module + "/compiler",
	module + "/plugins",
	module + "/schema",
	module + "/internal/topology/layout",
	// Size: these bring in every built-in API group of k8s.io/api
	// (client-go's scheme, typed clientsets and informers), gnostic and
	// kube-openapi's models, for a runtime that reads and writes Knative
	// objects through the dynamic client only. Status is written with
	// runtime/cluster/statuspatch, kinds are mapped with
	// internal/restmap.
	"k8s.io/api/",
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/discovery",
	"sigs.k8s.io/controller-runtime",
	"github.com/fluxcd/",
}

// notInKnc are what knc itself must not link: the Kubernetes client
// libraries that bring every built-in API group of k8s.io/api (client-go's
// scheme, typed clientsets and informers) with their package
// initialisers, which every start of knc would run, though its cluster
// commands use the dynamic client only. Kinds are mapped with
// internal/restmap, informers are built by internal/informer, and a
// kustomization entry is told local by compiler/kustomize's copy of
// Flux's rule: Flux's kustomize package links controller-runtime. The
// typed objects plugins render (core, apps, policy, rbac) stay.
var notInKnc = []string{
	"k8s.io/client-go/kubernetes",
	"k8s.io/client-go/informers",
	"k8s.io/client-go/discovery",
	"k8s.io/client-go/dynamic/dynamicinformer",
	"sigs.k8s.io/controller-runtime",
	"github.com/fluxcd/pkg/runtime",
}

// binaries are the commands knc ships.
var binaries = []string{"./cmd/knc", "./cmd/knc-runtime", "./cmd/knc-draw"}

// drawingOnly is what only knc-draw links: Graphviz, whose WebAssembly
// module is compiled at every start of a binary that links it.
var drawingOnly = []string{
	"github.com/goccy/go-graphviz",
	module + "/internal/graphvizcache",
	module + "/internal/topology/layout",
}

// notInTheDrawer are what knc-draw must not link: it lays out DOT, and
// needs neither the compiler nor the runtime.
var notInTheDrawer = []string{
	"cuelang.org/",
	"sigs.k8s.io/kustomize/",
	"github.com/nats-io/",
	"k8s.io/client-go",
	module + "/compiler",
	module + "/runtime",
	module + "/plugins",
}

// linked returns the packages of deps that start with one of prefixes, a
// prefix that ends in a letter matching a whole path element.
func linked(deps []string, prefixes []string) []string {
	var out []string
	for _, d := range deps {
		for _, p := range prefixes {
			if d == p || strings.HasPrefix(d, p) && (strings.HasSuffix(p, "/") || strings.HasPrefix(d, p+"/")) {
				out = append(out, d)
				break
			}
		}
	}
	return out
}

// TestBinariesLinkNoTestOnlyModules fails when a binary links a module
// only tests need.
func TestBinariesLinkNoTestOnlyModules(t *testing.T) {
	for _, bin := range binaries {
		p := list(t, bin)
		if len(p) != 1 {
			t.Fatalf("go list %s: %d packages", bin, len(p))
		}
		if bad := linked(p[0].Deps, testOnly); len(bad) > 0 {
			t.Errorf("%s links %s, which only tests may use: move the code that needs it into a package only tests import", bin, strings.Join(bad, ", "))
		}
	}
}

// TestRuntimeBinaryLinksOnlyTheRuntime fails when knc-runtime, the
// binary of the runtime's image, links the compiler, CUE, kustomize, Lua
// or Graphviz, or the Kubernetes libraries that would double its size.
func TestRuntimeBinaryLinksOnlyTheRuntime(t *testing.T) {
	p := list(t, "./cmd/knc-runtime")
	if len(p) != 1 {
		t.Fatalf("go list ./cmd/knc-runtime: %d packages", len(p))
	}
	if bad := linked(p[0].Deps, notInTheRuntime); len(bad) > 0 {
		t.Errorf("knc-runtime links %s; the runtime's binary carries the runtime only", strings.Join(bad, ", "))
	}
}

// TestKncLinksNoKubernetesClientSets fails when knc links client-go's
// clientsets, informers or discovery, controller-runtime, or Flux's
// kustomize package (its filesys package, which links none of them,
// stays).
func TestKncLinksNoKubernetesClientSets(t *testing.T) {
	p := list(t, "./cmd/knc")
	if len(p) != 1 {
		t.Fatalf("go list ./cmd/knc: %d packages", len(p))
	}
	bad := linked(p[0].Deps, notInKnc)
	if slices.Contains(p[0].Deps, "github.com/fluxcd/pkg/kustomize") {
		bad = append(bad, "github.com/fluxcd/pkg/kustomize")
	}
	if len(bad) > 0 {
		t.Errorf("knc links %s, whose initialisers every start of knc runs; use the dynamic client with internal/restmap and internal/informer", strings.Join(bad, ", "))
	}
}

// TestOnlyTheDrawerLinksGraphviz fails when a binary other than
// knc-draw links Graphviz, or when knc-draw links more than it draws
// with.
func TestOnlyTheDrawerLinksGraphviz(t *testing.T) {
	for _, bin := range binaries {
		p := list(t, bin)
		if len(p) != 1 {
			t.Fatalf("go list %s: %d packages", bin, len(p))
		}
		if bin == "./cmd/knc-draw" {
			for _, want := range drawingOnly {
				if len(linked(p[0].Deps, []string{want})) == 0 {
					t.Errorf("knc-draw does not link %s: it is what lays out drawings", want)
				}
			}
			if bad := linked(p[0].Deps, notInTheDrawer); len(bad) > 0 {
				t.Errorf("knc-draw links %s; it lays out DOT and needs neither the compiler nor the runtime", strings.Join(bad, ", "))
			}
			continue
		}
		if bad := linked(p[0].Deps, drawingOnly); len(bad) > 0 {
			t.Errorf("%s links %s; only knc-draw may, since every start of a binary that links Graphviz compiles its WebAssembly module", bin, strings.Join(bad, ", "))
		}
	}
}

func TestLinked(t *testing.T) {
	deps := []string{"cuelang.org/go/cue", "github.com/goccy/go-graphviz/internal/wasm", "github.com/yuin/gopher-luax", module + "/compiler/graph", module + "/compilerx"}
	got := linked(deps, notInTheRuntime)
	want := []string{"cuelang.org/go/cue", "github.com/goccy/go-graphviz/internal/wasm", module + "/compiler/graph"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("linked = %v, want %v", got, want)
	}
}
