// Package restmap maps the kinds of references to their resources for the
// runtime, from the API server's discovery documents.
package restmap

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Mapper maps a kind to its resource from the API server's
// discovery document of the kind's group version (/api/v1 or
// /apis/GROUP/VERSION), read with a plain REST client and kept per group
// version. A kind the kept document does not list is looked up again
// once, since it may have been installed since. It stands in for
// client-go's discovery client and restmapper, which import client-go's
// scheme of every built-in API group (most of k8s.io/api) into the
// runtime's binary; the runtime only ever maps the kinds of the
// references it resolves.
type Mapper struct {
	client rest.Interface

	mu sync.Mutex
	// versions holds a mapper per group version read; a group version the
	// API server does not serve maps nothing.
	versions map[schema.GroupVersion]meta.RESTMapper
}

// NewForConfigAndClient returns a Mapper that reads discovery documents
// as cfg says, over httpClient, as the dynamic client reads objects.
func NewForConfigAndClient(cfg *rest.Config, httpClient *http.Client) (*Mapper, error) {
	client, err := rest.UnversionedRESTClientForConfigAndClient(dynamic.ConfigFor(cfg), httpClient)
	if err != nil {
		return nil, err
	}
	return New(client), nil
}

// New returns a Mapper that reads discovery documents through client, a
// REST client of the API server's root that decodes JSON.
func New(client rest.Interface) *Mapper {
	return &Mapper{client: client, versions: map[schema.GroupVersion]meta.RESTMapper{}}
}

// RESTMapping returns the mapping of gk in version, or an error that
// meta.IsNoMatchError recognises when the API server does not serve it.
func (m *Mapper) RESTMapping(ctx context.Context, gk schema.GroupKind, version string) (*meta.RESTMapping, error) {
	gv := schema.GroupVersion{Group: gk.Group, Version: version}
	m.mu.Lock()
	known, ok := m.versions[gv]
	m.mu.Unlock()
	if ok {
		mapping, err := known.RESTMapping(gk, version)
		if !meta.IsNoMatchError(err) {
			return mapping, err
		}
	}
	fresh, err := m.read(ctx, gv)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.versions[gv] = fresh
	m.mu.Unlock()
	return fresh.RESTMapping(gk, version)
}

// read fetches the discovery document of gv and returns a mapper of the
// resources it lists.
func (m *Mapper) read(ctx context.Context, gv schema.GroupVersion) (meta.RESTMapper, error) {
	path := "/apis/" + gv.Group + "/" + gv.Version
	if gv.Group == "" {
		path = "/api/" + gv.Version
	}
	mapper := meta.NewDefaultRESTMapper([]schema.GroupVersion{gv})
	raw, err := m.client.Get().AbsPath(path).Do(ctx).Raw()
	if apierrors.IsNotFound(err) {
		return mapper, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the API server's discovery of %s: %w", gv, err)
	}
	var list metav1.APIResourceList
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, fmt.Errorf("reading the API server's discovery of %s: %w", gv, err)
	}
	for _, r := range list.APIResources {
		if strings.Contains(r.Name, "/") {
			continue // a subresource
		}
		scope := meta.RESTScopeRoot
		if r.Namespaced {
			scope = meta.RESTScopeNamespace
		}
		singular := r.SingularName
		if singular == "" {
			singular = strings.ToLower(r.Kind)
		}
		mapper.AddSpecific(gv.WithKind(r.Kind), gv.WithResource(r.Name), gv.WithResource(singular), scope)
	}
	return mapper, nil
}
