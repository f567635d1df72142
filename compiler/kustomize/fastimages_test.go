package kustomize

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestFastRendererMatchesKrustyOnRandomImages renders overlays whose base
// holds workloads of several kinds with images in random forms, and
// whose kustomizations set images, and maybe a namespace, labels and a
// patch, in the base and the overlay, all generated at random from a
// fixed seed, both ways.
func TestFastRendererMatchesKrustyOnRandomImages(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 2718))
	cases := 120
	if testing.Short() {
		cases = 30
	}
	fastOnes := 0
	for i := range cases {
		g := &imageGen{rng: rng}
		objects := g.workloads()
		base := "resources: [workloads.yaml]\n" + g.transformers()
		overlay := "resources: [../base]\n" + g.transformers()
		if rng.IntN(3) == 0 {
			overlay += "patches:\n- path: patch.yaml\n"
		}
		root := t.TempDir()
		writeTree(t, root, map[string]string{
			"base/kustomization.yaml":    base,
			"base/workloads.yaml":        objects,
			"overlay/kustomization.yaml": overlay,
			"overlay/patch.yaml":         "apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  template:\n    spec:\n      containers:\n      - image: " + g.image() + "\n",
		})
		tookFast, diff := renderBoth(t, filepath.Join(root, "overlay"), root)
		if tookFast {
			fastOnes++
		}
		if diff != "" {
			t.Errorf("case %d: knc's renderer differs from krusty (-krusty +knc):\nobjects:\n%s\nbase:\n%s\noverlay:\n%s\n%s", i, objects, base, overlay, diff)
		}
	}
	t.Logf("knc's renderer took %d of %d cases", fastOnes, cases)
	if fastOnes < cases/2 {
		t.Errorf("knc's renderer took %d of %d cases, want at least half", fastOnes, cases)
	}
}

// imageGen writes random workloads and images entries.
type imageGen struct {
	rng *rand.Rand
}

func (g *imageGen) pick(from ...string) string { return from[g.rng.IntN(len(from))] }

const digest = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

// image is an image in one of the forms images are written in, or one
// that only looks like them.
func (g *imageGen) image() string {
	name := g.pick("nginx", "nginx2", "my-nginx", "docker.io/library/nginx", "localhost:5000/app", "app", "example.com/team/app", "ngin")
	switch g.rng.IntN(4) {
	case 0:
		name += ":" + g.pick("1.2", "latest", "v2-rc.1")
	case 1:
		name += "@" + digest
	case 2:
		name += ":1@" + digest
	}
	return name
}

// scalar writes an image plain, quoted or with a comment.
func (g *imageGen) scalar(v string) string {
	switch g.rng.IntN(5) {
	case 0:
		return `"` + v + `"`
	case 1:
		return "'" + v + "'"
	case 2:
		return v + " # pinned"
	}
	return v
}

func (g *imageGen) containers(indent string) string {
	var b strings.Builder
	for _, field := range []string{"initContainers", "containers"} {
		if field == "initContainers" && g.rng.IntN(2) == 0 {
			continue
		}
		fmt.Fprintf(&b, "%s%s:\n", indent, field)
		for j := range 1 + g.rng.IntN(3) {
			fmt.Fprintf(&b, "%s- name: c%d\n", indent, j)
			if g.rng.IntN(8) > 0 {
				fmt.Fprintf(&b, "%s  image: %s\n", indent, g.scalar(g.image()))
			}
		}
	}
	if g.rng.IntN(3) == 0 {
		fmt.Fprintf(&b, "%svolumes:\n%s- name: v\n%s  image: {reference: %s}\n", indent, indent, indent, g.image())
	}
	return b.String()
}

func (g *imageGen) workloads() string {
	docs := []string{
		"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: deploy\nspec:\n  template:\n    spec:\n" + g.containers("      "),
		"apiVersion: serving.knative.dev/v1\nkind: Service\nmetadata:\n  name: svc\nspec:\n  template:\n    spec:\n" + g.containers("      "),
		"apiVersion: batch/v1\nkind: CronJob\nmetadata:\n  name: cron\nspec:\n  jobTemplate:\n    spec:\n      template:\n        spec:\n" + g.containers("          "),
		"apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod\nspec:\n" + g.containers("  "),
		"apiVersion: sources.knative.dev/v1\nkind: ContainerSource\nmetadata:\n  name: src\nspec:\n  template:\n    spec:\n" + g.containers("      "),
	}
	return strings.Join(docs, "---\n")
}

// transformers writes images, and maybe a namespace and labels, of a
// kustomization.
func (g *imageGen) transformers() string {
	var entries []*yaml.Node
	for range g.rng.IntN(4) {
		e := &yaml.Node{Kind: yaml.MappingNode}
		add := func(k, v string) {
			e.Content = append(e.Content, &yaml.Node{Kind: yaml.ScalarNode, Value: k}, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v})
		}
		add("name", g.pick("nginx", "docker.io/library/nginx", "localhost:5000/app", "app", "ngin.", "example.com/team/app"))
		if g.rng.IntN(2) == 0 {
			add("newName", g.pick("nginx", "app", "registry.example.com/app", "localhost:5000/app"))
		}
		if g.rng.IntN(2) == 0 {
			add("newTag", g.pick("1.3", "v2", "latest"))
		}
		if g.rng.IntN(3) == 0 {
			add("digest", "sha256:fedcba9876543210fedcba9876543210fedcba9876543210fedcba9876543210")
		}
		if g.rng.IntN(4) == 0 {
			add("tagSuffix", g.pick("-debug", "-rc.1"))
		}
		entries = append(entries, e)
	}
	out, err := yaml.Marshal(map[string]any{"images": &yaml.Node{Kind: yaml.SequenceNode, Content: entries}})
	if err != nil {
		panic(err)
	}
	text := string(out)
	if len(entries) == 0 {
		text = ""
	}
	if g.rng.IntN(2) == 0 {
		text += "namespace: " + g.pick("prod", "staging") + "\n"
	}
	if g.rng.IntN(2) == 0 {
		text += "labels:\n- pairs: {env: " + g.pick("prod", "dev") + "}\n"
	}
	return text
}
