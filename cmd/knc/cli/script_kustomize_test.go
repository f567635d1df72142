package cli

import (
	"github.com/rogpeppe/go-internal/testscript"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
)

// cmdKustomize runs kustomize build on a directory, with krusty's default
// options as the kustomize CLI has them, and prints what it renders:
// kustomize build DIR.
func cmdKustomize(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || args[0] != "build" {
		ts.Fatalf("usage: kustomize build DIR")
	}
	m, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), ts.MkAbs(args[1]))
	if err == nil {
		var out []byte
		if out, err = m.AsYaml(); err == nil {
			_, err = ts.Stdout().Write(out)
		}
	}
	switch {
	case neg && err == nil:
		ts.Fatalf("kustomize build %s succeeded", args[1])
	case !neg && err != nil:
		ts.Fatalf("kustomize build %s: %v", args[1], err)
	}
}
