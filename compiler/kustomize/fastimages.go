package kustomize

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"
	kyaml "sigs.k8s.io/kustomize/kyaml/yaml"
)

// kustomize's image tag transformer, one per entry of images, runs twice
// over every object but CustomResourceDefinitions (api/filters/imagetag):
// first it rewrites the image of each item of every containers or
// initContainers list, wherever the list is (legacy.go); then the image
// fields its built-in field specs name, of any kind
// (api/internal/konfig/builtinpluginconsts/images.go), some of them the
// same fields again. knc does both, in that order, and leaves to krusty
// an object whose fields on the way are of another shape than kustomize
// expects, or null, and an image that is not a plain string.

// fastImage is an entry of images.
type fastImage struct {
	newName, newTag, digest, tagSuffix string
	// matches is kustomize's test of an image against the entry's name,
	// which it reads as a regular expression followed by a tag and a
	// digest, each optional.
	matches *regexp.Regexp
}

var (
	// imageName is what an entry's name or newName must look like for knc
	// to take it: a registry, a port and a path, but no regular expression
	// but the dot.
	imageName   = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9._/:-]*$`)
	imageTag    = regexp.MustCompile(`^[a-zA-Z0-9_][a-zA-Z0-9_.-]*$`)
	tagSuffix   = regexp.MustCompile(`^[a-zA-Z0-9_.-]+$`)
	imageDigest = regexp.MustCompile(`^[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*:[a-zA-Z0-9=_-]+$`)
)

// tagAndDigest is what kustomize allows after the name when it matches an
// image against an entry.
const tagAndDigest = `(:[a-zA-Z0-9_.{}-]*)?(@[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*:[a-zA-Z0-9_.{}-]*)?$`

// imageEntry reads an entry of images.
func imageEntry(n *yaml.Node) (fastImage, bool) {
	var img fastImage
	if n.Kind != yaml.MappingNode {
		return img, false
	}
	var name string
	fields := map[string]*string{"name": &name, "newName": &img.newName, "newTag": &img.newTag, "digest": &img.digest, "tagSuffix": &img.tagSuffix}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		key, value := n.Content[i].Value, n.Content[i+1]
		field, ok := fields[key]
		if !ok || seen[key] || !isString(value) || value.Style == 0 && kyaml.IsValueNonString(value.Value) {
			return img, false
		}
		seen[key] = true
		*field = value.Value
	}
	if !imageName.MatchString(name) ||
		img.newName != "" && !imageName.MatchString(img.newName) ||
		img.newTag != "" && !imageTag.MatchString(img.newTag) ||
		img.tagSuffix != "" && !tagSuffix.MatchString(img.tagSuffix) ||
		img.digest != "" && !imageDigest.MatchString(img.digest) {
		return img, false
	}
	var err error
	img.matches, err = regexp.Compile("^" + name + tagAndDigest)
	return img, err == nil
}

// splitImage cuts an image into name, tag and digest as kustomize does:
// the first colon or at sign after the first slash ends the name, or the
// first of the whole image when no slash comes after its first character.
func splitImage(image string) (name, tag, digest string) {
	from := 0
	if slash := strings.Index(image, "/"); slash > 0 {
		from = slash
	}
	at := strings.Index(image[from:], "@")
	colon := strings.Index(image[from:], ":")
	switch {
	case at < 0 && colon < 0:
		return image, "", ""
	case at >= 0 && (colon < 0 || at < colon):
		return image[:from+at], "", image[from+at+1:]
	case at >= 0:
		return image[:from+colon], image[from+colon+1 : from+at], image[from+at+1:]
	default:
		return image[:from+colon], image[from+colon+1:], ""
	}
}

// rewrite gives the image the entry asks for in place of one that matches
// it: a new tag, digest, or both, drop the other; a suffix extends the tag
// when neither is given.
func (img *fastImage) rewrite(image string) string {
	name, tag, digest := splitImage(image)
	if img.newName != "" {
		name = img.newName
	}
	switch {
	case img.newTag != "" && img.digest != "":
		tag, digest = img.newTag, img.digest
	case img.newTag != "":
		tag, digest = img.newTag, ""
	case img.digest != "":
		tag, digest = "", img.digest
	case img.tagSuffix != "":
		tag, digest = tag+img.tagSuffix, ""
	}
	if tag != "" {
		name += ":" + tag
	}
	if digest != "" {
		name += "@" + digest
	}
	return name
}

// set rewrites an image field that matches the entry. kustomize replaces
// the node with one of the new value, untagged and without comments, in
// the old one's style. An untagged node is one an entry set before.
func (img *fastImage) set(n *yaml.Node) bool {
	if n.Kind != yaml.ScalarNode || n.Tag != "!!str" && n.Tag != "" {
		return false
	}
	if !img.matches.MatchString(n.Value) {
		return true
	}
	value := img.rewrite(n.Value)
	if kyaml.IsValueNonString(value) {
		return false
	}
	*n = yaml.Node{Kind: yaml.ScalarNode, Value: value, Style: n.Style}
	return true
}

// imageFieldPaths are the paths of kustomize's built-in image field specs;
// a name ending in [] is a list, each of whose items the rest applies to.
var imageFieldPaths = [][]string{
	{"spec", "containers[]", "image"},
	{"spec", "initContainers[]", "image"},
	{"spec", "volumes[]", "image", "reference"},
	{"spec", "template", "spec", "containers[]", "image"},
	{"spec", "template", "spec", "initContainers[]", "image"},
	{"spec", "template", "spec", "volumes[]", "image", "reference"},
	{"spec", "jobTemplate", "spec", "template", "spec", "volumes[]", "image", "reference"},
}

// setImages applies the entries of images to the objects, each entry in
// turn to all of them, as kustomize does.
func setImages(objs []*fastObject, images []fastImage) bool {
	for i := range images {
		for _, o := range objs {
			if o.kind == "CustomResourceDefinition" {
				continue
			}
			if !images[i].containers(o.node) {
				return false
			}
			for _, path := range imageFieldPaths {
				if !images[i].field(o.node, path) {
					return false
				}
			}
		}
	}
	return true
}

// containers rewrites the images of the items of every containers and
// initContainers list under n, the deepest first, as kustomize's legacy
// filter does; it visits a map's fields in order, a field's value before
// the field.
func (img *fastImage) containers(n *yaml.Node) bool {
	switch n.Kind {
	case yaml.MappingNode:
		if !uniqueKeys(n) {
			return false
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			key, value := n.Content[i], n.Content[i+1]
			if !img.containers(value) {
				return false
			}
			if key.Value != "containers" && key.Value != "initContainers" || value.Kind != yaml.SequenceNode {
				continue
			}
			for _, item := range value.Content {
				if isNull(item) {
					continue
				}
				if item.Kind != yaml.MappingNode {
					return false
				}
				if image := mapValue(item, "image"); image != nil && !img.set(image) {
					return false
				}
			}
		}
	case yaml.SequenceNode:
		for _, item := range n.Content {
			if !img.containers(item) {
				return false
			}
		}
	}
	return true
}

// uniqueKeys reports whether no two of a map's keys are the same, as
// kyaml finds a field by its first key.
func uniqueKeys(n *yaml.Node) bool {
	if len(n.Content) <= 16 {
		for i := 0; i+1 < len(n.Content); i += 2 {
			for j := i + 2; j+1 < len(n.Content); j += 2 {
				if n.Content[i].Value == n.Content[j].Value {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[string]bool, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		if seen[n.Content[i].Value] {
			return false
		}
		seen[n.Content[i].Value] = true
	}
	return true
}

// field rewrites the image at path under n, as kustomize's field spec
// filter does without creating fields: a missing field ends the path.
func (img *fastImage) field(n *yaml.Node, path []string) bool {
	if len(path) == 0 {
		return img.set(n)
	}
	if n.Kind != yaml.MappingNode {
		return false
	}
	name, list := strings.CutSuffix(path[0], "[]")
	value := mapValue(n, name)
	switch {
	case value == nil:
		return true
	case !list:
		return img.field(value, path[1:])
	case value.Kind != yaml.SequenceNode:
		return false
	}
	for _, item := range value.Content {
		if isNull(item) {
			continue
		}
		if !img.field(item, path[1:]) {
			return false
		}
	}
	return true
}
