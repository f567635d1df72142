package kustomize

import (
	"fmt"
	"path/filepath"
	"sync"

	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/resmap"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/kustomize/kyaml/openapi"
	sigsyaml "sigs.k8s.io/yaml"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/inputfs"
)

var (
	// buildMu serializes builds: kustomize keeps the OpenAPI schema, and
	// caches derived from it, in globals that it does not guard.
	buildMu sync.Mutex
	// schemaIsBuiltin says that kyaml's global OpenAPI schema is the
	// built-in Kubernetes one, as no build since the last reset set
	// another.
	schemaIsBuiltin bool
)

// build renders the kustomization in dir as Flux's kustomize.Build does:
// krusty with no load restrictions and only the built-in plugins, and the
// built-in OpenAPI schema at the start of every build. Flux reloads that
// schema before each build, which takes longer than building a small
// overlay; build reloads it only when a build may have changed it, that
// is after and before a build whose kustomizations have an openapi field.
// The differential test holds the two to the same output.
func build(fs filesys.FileSystem, dir string, ownSchema bool) (m resmap.ResMap, output []string, err error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	output = captureOutput(func() { m, err = runKrusty(fs, dir, ownSchema) })
	return m, output, err
}

// runKrusty is build's work, under buildMu.
func runKrusty(fs filesys.FileSystem, dir string, ownSchema bool) (m resmap.ResMap, err error) {
	// Malformed objects can make kustomize panic; that is the build's
	// error, not the end of knc.
	defer func() {
		if r := recover(); r != nil {
			m, err = nil, fmt.Errorf("kustomize panicked: %v", r)
		}
	}()
	if ownSchema || !schemaIsBuiltin {
		openapi.ResetOpenAPI()
		_ = openapi.Schema()
	}
	schemaIsBuiltin = !ownSchema
	k := krusty.MakeKustomizer(&krusty.Options{
		LoadRestrictions: types.LoadRestrictionsNone,
		PluginConfig:     types.DisabledPluginConfig(),
	})
	return k.Run(fs, dir)
}

// namesSchema says whether the kustomization in dir, or one it includes,
// has an openapi field, with which kustomize replaces its global schema.
// A kustomization file that cannot be read counts as one that might.
func namesSchema(fsys inputfs.FS, dir string, seen map[string]bool) bool {
	if seen[dir] {
		return false
	}
	seen[dir] = true
	k, _, err := readKustomization(fsys, dir)
	if err != nil {
		return true
	}
	if len(k.OpenAPI) > 0 {
		return true
	}
	for _, sub := range includes(fsys, dir, k) {
		if namesSchema(fsys, sub, seen) {
			return true
		}
	}
	return false
}

// readKustomization reads and decodes the kustomization file in dir, an
// absolute directory, and returns it with the file's path.
func readKustomization(fsys inputfs.FS, dir string) (*types.Kustomization, string, error) {
	kfile := load.KustomizationFile(fsys, dir)
	if kfile == "" {
		return nil, "", fmt.Errorf("%s: no kustomization file", filepath.Clean(dir))
	}
	data, err := fsys.ReadFile(kfile, load.MaxFileBytes)
	if err != nil {
		return nil, kfile, err
	}
	var k types.Kustomization
	if err := sigsyaml.Unmarshal(data, &k); err != nil {
		return nil, kfile, err
	}
	return &k, kfile, nil
}
