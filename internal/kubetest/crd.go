package kubetest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"
)

// crdTimeout bounds how long Start waits for the CRDs given as options.
const crdTimeout = 30 * time.Second

func contextWithTimeout(d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), d)
}

var crdScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	if err := apiextensionsv1.AddToScheme(s); err != nil {
		panic(err)
	}
	return s
}()

// InstallCRDs creates the CRDs, or updates them where they exist, and
// returns once each is Established and its versions are served through
// discovery: only then do requests for its resources stop failing with 404.
// The arguments are not modified.
func (e *Env) InstallCRDs(ctx context.Context, crds ...*apiextensionsv1.CustomResourceDefinition) error {
	if len(crds) == 0 {
		return nil
	}
	copies := make([]*apiextensionsv1.CustomResourceDefinition, len(crds))
	for i, crd := range crds {
		copies[i] = crd.DeepCopy()
	}
	// envtest's CreateCRDs takes no context; its calls are short, and the
	// waits below, which are not, honour ctx.
	if err := envtest.CreateCRDs(e.admin, copies); err != nil {
		return fmt.Errorf("kubetest: installing CRDs: %w", err)
	}
	names := make([]string, len(copies))
	for i, crd := range copies {
		names[i] = crd.Name
	}
	if err := waitEstablished(ctx, e.admin, names); err != nil {
		return err
	}
	opts := envtest.CRDInstallOptions{Scheme: crdScheme, PollInterval: 50 * time.Millisecond, MaxTime: crdTimeout}
	if dl, ok := ctx.Deadline(); ok {
		opts.MaxTime = time.Until(dl)
	}
	if err := envtest.WaitForCRDs(e.admin, copies, opts); err != nil {
		return fmt.Errorf("kubetest: waiting for CRDs to be served: %w", err)
	}
	return nil
}

// InstallCRDYAML installs the CRDs in a stream of YAML or JSON documents, as
// InstallCRDs does.
func (e *Env) InstallCRDYAML(ctx context.Context, data []byte) error {
	crds, err := DecodeCRDs(data)
	if err != nil {
		return err
	}
	return e.InstallCRDs(ctx, crds...)
}

// InstallCRDPaths installs the CRDs in the given files, or in the .yaml,
// .yml and .json files directly inside the given directories, as
// InstallCRDs does. A path that does not exist is an error.
func (e *Env) InstallCRDPaths(ctx context.Context, paths ...string) error {
	if len(paths) == 0 {
		return nil
	}
	opts := envtest.CRDInstallOptions{Paths: paths, ErrorIfPathMissing: true}
	if err := envtest.ReadCRDFiles(&opts); err != nil {
		return fmt.Errorf("kubetest: reading CRDs: %w", err)
	}
	if len(opts.CRDs) == 0 {
		return fmt.Errorf("kubetest: no CRDs in %v", paths)
	}
	return e.InstallCRDs(ctx, opts.CRDs...)
}

// DecodeCRDs decodes a stream of YAML or JSON documents, each a
// CustomResourceDefinition of apiextensions.k8s.io/v1. Empty documents are
// skipped; any other kind is an error.
func DecodeCRDs(data []byte) ([]*apiextensionsv1.CustomResourceDefinition, error) {
	// Strict, so that a misspelt field in a test's CRD fails loudly instead
	// of vanishing on decode.
	decoder := serializer.NewCodecFactory(crdScheme, serializer.EnableStrict).UniversalDeserializer()
	want := apiextensionsv1.SchemeGroupVersion.WithKind("CustomResourceDefinition")
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var crds []*apiextensionsv1.CustomResourceDefinition
	for i := 0; ; i++ {
		doc, err := reader.Read()
		if errors.Is(err, io.EOF) {
			return crds, nil
		}
		if err != nil {
			return nil, fmt.Errorf("kubetest: reading document %d: %w", i, err)
		}
		js, err := utilyaml.ToJSON(doc)
		if err != nil {
			return nil, fmt.Errorf("kubetest: document %d: %w", i, err)
		}
		if t := bytes.TrimSpace(js); len(t) == 0 || string(t) == "null" {
			continue // only comments or separators
		}
		obj, gvk, err := decoder.Decode(js, nil, nil)
		if err != nil {
			return nil, fmt.Errorf("kubetest: decoding document %d: %w", i, err)
		}
		crd, ok := obj.(*apiextensionsv1.CustomResourceDefinition)
		if !ok || *gvk != want {
			return nil, fmt.Errorf("kubetest: document %d is %s, want %s", i, gvkString(gvk), want)
		}
		crds = append(crds, crd)
	}
}

// waitEstablished polls, as cfg, until every CRD named reports
// Established, or until one reports that its names were refused, which no
// amount of waiting fixes.
func waitEstablished(ctx context.Context, cfg *rest.Config, names []string) error {
	c, err := client.New(cfg, client.Options{Scheme: crdScheme})
	if err != nil {
		return fmt.Errorf("kubetest: %w", err)
	}
	for _, name := range names {
		var last string
		err := wait.PollUntilContextCancel(ctx, 50*time.Millisecond, true, func(ctx context.Context) (bool, error) {
			var got apiextensionsv1.CustomResourceDefinition
			if err := c.Get(ctx, client.ObjectKey{Name: name}, &got); err != nil {
				last = err.Error()
				return false, nil
			}
			for _, cond := range got.Status.Conditions {
				switch {
				case cond.Type == apiextensionsv1.NamesAccepted && cond.Status == apiextensionsv1.ConditionFalse:
					return false, fmt.Errorf("names not accepted: %s", cond.Message)
				case cond.Type == apiextensionsv1.Established && cond.Status == apiextensionsv1.ConditionTrue:
					return true, nil
				}
			}
			last = "not Established yet"
			return false, nil
		})
		if err != nil {
			return fmt.Errorf("kubetest: CRD %s: %w (last seen: %s)", name, err, last)
		}
	}
	return nil
}

func gvkString(gvk *schema.GroupVersionKind) string {
	if gvk == nil {
		return "an unknown kind"
	}
	return gvk.String()
}

// SchemalessCRD returns the YAML of a namespaced CRD of group whose v1
// objects may hold any fields and have a status subresource: a test kind
// for what reads and writes objects without knowing their schema.
func SchemalessCRD(group, kind, plural string) []byte {
	return fmt.Appendf(nil, `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: %[3]s.%[1]s
spec:
  group: %[1]s
  names: {kind: %[2]s, listKind: %[2]sList, plural: %[3]s, singular: %[4]s}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
`, group, kind, plural, strings.ToLower(kind))
}
