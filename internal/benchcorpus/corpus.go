// Package benchcorpus generates manifest corpora for benchmarks: mixed
// kinds, about twenty Triggers per Broker, spread over namespaces. The same
// corpus can be laid out as one YAML stream per kind, so that `cue vet` can
// check each file against one definition.
package benchcorpus

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Shape says how large a corpus is.
type Shape struct {
	// Objects is the total number of Knative objects.
	Objects int
	// Namespaces spreads the objects.
	Namespaces int
	// NamespacePrefix names the namespaces, PREFIX-0 and on; the default
	// is team.
	NamespacePrefix string
}

// Counts splits a corpus: per 25 objects, one Broker, twenty Triggers, one
// Channel and three Subscriptions.
func (s Shape) Counts() (brokers, triggers, channels, subscriptions int) {
	groups := s.Objects / 25
	return groups, groups * 20, groups, groups * 3
}

// WriteByKind writes brokers.yaml, triggers.yaml, channels.yaml and
// subscriptions.yaml into dir, plus services.yaml with the subscribers.
func WriteByKind(dir string, s Shape) error {
	if s.Namespaces == 0 {
		s.Namespaces = 10
	}
	brokers, _, channels, _ := s.Counts()
	files := map[string]*os.File{}
	for _, name := range []string{"brokers", "triggers", "channels", "subscriptions", "services"} {
		f, err := os.Create(filepath.Join(dir, name+".yaml"))
		if err != nil {
			return err
		}
		defer f.Close()
		files[name] = f
	}
	prefix := s.NamespacePrefix
	if prefix == "" {
		prefix = "team"
	}
	ns := func(i int) string { return fmt.Sprintf("%s-%d", prefix, i%s.Namespaces) }
	for b := range brokers {
		if err := writeBroker(files["brokers"], ns(b), b); err != nil {
			return err
		}
		if err := writeService(files["services"], ns(b), b); err != nil {
			return err
		}
		for t := range 20 {
			if err := writeTrigger(files["triggers"], ns(b), b, t); err != nil {
				return err
			}
		}
	}
	for c := range channels {
		if err := writeChannel(files["channels"], ns(c), c); err != nil {
			return err
		}
		for i := range 3 {
			if err := writeSubscription(files["subscriptions"], ns(c), c, i); err != nil {
				return err
			}
		}
	}
	for _, f := range files {
		if err := f.Close(); err != nil {
			return err
		}
	}
	return nil
}

func writeBroker(w io.Writer, ns string, b int) error {
	_, err := fmt.Fprintf(w, `---
apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: broker-%d
  namespace: %s
spec:
  delivery:
    deadLetterSink:
      ref: {apiVersion: v1, kind: Service, name: sink-%d}
    retry: 5
    backoffPolicy: exponential
    backoffDelay: PT0.2S
`, b, ns, b)
	return err
}

func writeService(w io.Writer, ns string, b int) error {
	_, err := fmt.Fprintf(w, `---
apiVersion: v1
kind: Service
metadata:
  name: sink-%d
  namespace: %s
spec:
  ports:
  - port: 80
`, b, ns)
	return err
}

func writeTrigger(w io.Writer, ns string, b, t int) error {
	var filter string
	switch t % 4 {
	case 0:
		filter = fmt.Sprintf("  filter:\n    attributes:\n      type: com.example.type%d\n      source: /broker/%d\n", t, b)
	case 1:
		filter = fmt.Sprintf("  filters:\n  - exact: {type: com.example.type%d}\n  - prefix: {source: /shop/%d}\n", t, b)
	case 2:
		filter = fmt.Sprintf("  filters:\n  - any:\n    - exact: {type: com.example.a%d}\n    - suffix: {subject: \".%d\"}\n  - not: {exact: {source: /test}}\n", t, t)
	case 3:
		filter = fmt.Sprintf("  filters:\n  - cesql: \"type = 'com.example.type%d' AND EXISTS subject\"\n", t)
	}
	_, err := fmt.Fprintf(w, `---
apiVersion: eventing.knative.dev/v1
kind: Trigger
metadata:
  name: trigger-%d-%d
  namespace: %s
  labels:
    app: shop
spec:
  broker: broker-%d
%s  subscriber:
    ref:
      apiVersion: v1
      kind: Service
      name: sink-%d
    uri: /events/%d
  delivery:
    retry: 3
    timeout: PT5S
`, b, t, ns, b, filter, b, t)
	return err
}

func writeChannel(w io.Writer, ns string, c int) error {
	_, err := fmt.Fprintf(w, `---
apiVersion: messaging.knative.dev/v1
kind: Channel
metadata:
  name: channel-%d
  namespace: %s
spec:
  delivery:
    retry: 2
`, c, ns)
	return err
}

func writeSubscription(w io.Writer, ns string, c, i int) error {
	_, err := fmt.Fprintf(w, `---
apiVersion: messaging.knative.dev/v1
kind: Subscription
metadata:
  name: sub-%d-%d
  namespace: %s
spec:
  channel: {apiVersion: messaging.knative.dev/v1, kind: Channel, name: channel-%d}
  subscriber:
    ref: {apiVersion: v1, kind: Service, name: sink-%d}
  reply:
    uri: http://replies.example.com/%d
`, c, i, ns, c, c, i)
	return err
}

// Layout says how WriteLayout lays out a split corpus.
type Layout int

const (
	// Plain writes the parts as plain files: one deploy unit.
	Plain Layout = iota
	// Overlays makes each part a kustomize base, and overlays/part-N a
	// kustomization that includes it: the same objects, in deploy units
	// of their own.
	Overlays
	// PatchedOverlays are Overlays that, as environments do, set their
	// namespace and patch a Broker from a strategic-merge patch file.
	PatchedOverlays
	// LabelledOverlays are Overlays that add a label and an annotation to
	// every object's metadata, as environments do.
	LabelledOverlays
	// SelectorLabelledOverlays are Overlays that add a label to every
	// object and to the selectors of its Services.
	SelectorLabelledOverlays
	// ImageOverlays are Overlays that set an image tag, as environments
	// do, which no object here uses.
	ImageOverlays
	// JSONPatchedOverlays are Overlays that change a Broker with an inline
	// JSON patch, which only kustomize's own renderer builds.
	JSONPatchedOverlays
)

// WriteLayout writes the corpus in parts directories, part-0 and on, each
// with its share of the objects in namespaces of its own, laid out as
// layout says.
func WriteLayout(dir string, s Shape, parts int, layout Layout) error {
	for i := range parts {
		part := filepath.Join(dir, fmt.Sprintf("part-%d", i))
		if err := os.MkdirAll(part, 0o755); err != nil {
			return err
		}
		ps := Shape{Objects: s.Objects / parts, Namespaces: s.Namespaces, NamespacePrefix: fmt.Sprintf("part-%d", i)}
		if err := WriteByKind(part, ps); err != nil {
			return err
		}
		if layout == Plain {
			continue
		}
		base := "resources: [brokers.yaml, triggers.yaml, channels.yaml, subscriptions.yaml, services.yaml]\n"
		if err := os.WriteFile(filepath.Join(part, "kustomization.yaml"), []byte(base), 0o644); err != nil {
			return err
		}
		overlay := filepath.Join(dir, "overlays", fmt.Sprintf("part-%d", i))
		if err := os.MkdirAll(overlay, 0o755); err != nil {
			return err
		}
		text := fmt.Sprintf("resources: [../../part-%d]\n", i)
		switch layout {
		case PatchedOverlays:
			text += fmt.Sprintf("namespace: env-%d\npatches:\n- path: broker-delivery.yaml\n", i)
			patch := fmt.Sprintf(`apiVersion: eventing.knative.dev/v1
kind: Broker
metadata:
  name: broker-0
  namespace: part-%d-0
spec:
  delivery:
    retry: 10
    backoffDelay: PT1S
`, i)
			if err := os.WriteFile(filepath.Join(overlay, "broker-delivery.yaml"), []byte(patch), 0o644); err != nil {
				return err
			}
		case LabelledOverlays:
			text += "labels:\n- pairs: {env: prod}\ncommonAnnotations: {example.com/owner: shop}\n"
		case SelectorLabelledOverlays:
			text += "labels:\n- pairs: {env: prod}\n  includeSelectors: true\n"
		case ImageOverlays:
			text += "images:\n- name: example.com/app\n  newTag: v2\n"
		case JSONPatchedOverlays:
			text += "patches:\n- target: {kind: Broker, name: broker-0}\n  patch: |-\n    - op: add\n      path: /spec/delivery\n      value: {retry: 10}\n"
		}
		if err := os.WriteFile(filepath.Join(overlay, "kustomization.yaml"), []byte(text), 0o644); err != nil {
			return err
		}
	}
	return nil
}
