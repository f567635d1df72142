package project

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/knc-dev/knc/compiler/diag"
	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/compiler/model"
)

// FileNames are the names knc looks for, in order.
var FileNames = []string{"knc.yaml", "knc.yml"}

// Config is knc.yaml.
type Config struct {
	model.TypeMeta   `json:",inline"`
	DefaultNamespace string           `json:"defaultNamespace,omitempty"`
	ClusterDomain    string           `json:"clusterDomain,omitempty"`
	Exclude          []string         `json:"exclude,omitempty"`
	Features         *Features        `json:"features,omitempty"`
	External         []ExternalObject `json:"external,omitempty"`
	Runtime          *Runtime         `json:"runtime,omitempty"`

	// File is where the config was read from; empty for the defaults.
	File string `json:"-"`
}

// Features mirror the cluster's config-features ConfigMap: every flag that
// changes what Knative's admission accepts for the four kinds.
type Features struct {
	NewTriggerFilters        string `json:"new-trigger-filters,omitempty"`
	DeliveryTimeout          string `json:"delivery-timeout,omitempty"`
	DeliveryRetryAfter       string `json:"delivery-retryafter,omitempty"`
	CrossNamespaceEventLinks string `json:"cross-namespace-event-links,omitempty"`
	KReferenceGroup          string `json:"kreference-group,omitempty"`
}

// byName returns the flags by their names in the ConfigMap.
func (f *Features) byName() map[string]string {
	return map[string]string{
		model.FeatureNewTriggerFilters:        f.NewTriggerFilters,
		model.FeatureDeliveryTimeout:          f.DeliveryTimeout,
		model.FeatureDeliveryRetryAfter:       f.DeliveryRetryAfter,
		model.FeatureCrossNamespaceEventLinks: f.CrossNamespaceEventLinks,
		model.FeatureKReferenceGroup:          f.KReferenceGroup,
	}
}

// ExternalObject is an object that exists in the cluster but not in the
// repository.
type ExternalObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Name       string `json:"name"`
	Namespace  string `json:"namespace,omitempty"`
	URL        string `json:"url,omitempty"`
}

// Runtime holds the settings of the runtime knc build deploys.
type Runtime struct {
	Image         string       `json:"image,omitempty"`
	Replicas      *int64       `json:"replicas,omitempty"`
	Durability    string       `json:"durability,omitempty"`
	MaxEventBytes *int64       `json:"maxEventBytes,omitempty"`
	TTL           *int64       `json:"ttl,omitempty"`
	Storage       *Storage     `json:"storage,omitempty"`
	NATS          *NATSRuntime `json:"nats,omitempty"`
	Memory        *Memory      `json:"memory,omitempty"`
	Tracing       *Tracing     `json:"tracing,omitempty"`
	Metrics       *Metrics     `json:"metrics,omitempty"`
	UI            *RuntimeUI   `json:"ui,omitempty"`
}

// RuntimeUI configures the live page the runtime serves at /ui.
type RuntimeUI struct {
	// RecentEvents is how many of the last events each Trigger or
	// Subscription matched the page shows, attributes only; 0, the
	// default, keeps none, as attributes may be sensitive.
	RecentEvents *int64 `json:"recentEvents,omitempty"`
}

// MaxRecentEvents bounds runtime.ui.recentEvents.
const MaxRecentEvents = 1000

// Tracing makes the runtime export OpenTelemetry spans over OTLP.
type Tracing struct {
	// Endpoint is the OTLP receiver: http:// or https:// URL, or
	// HOST:PORT.
	Endpoint string `json:"endpoint,omitempty"`
	// Protocol is "grpc" or "http" (OTLP/HTTP with protobuf, the default).
	Protocol string `json:"protocol,omitempty"`
	// Insecure sends without TLS to an endpoint given as HOST:PORT.
	Insecure bool `json:"insecure,omitempty"`
	// SamplingRatio is the share of new traces sampled, 0 to 1.
	SamplingRatio *float64 `json:"samplingRatio,omitempty"`
	// Headers go with every export; they are stored in the runtime's
	// ConfigMap, so a key belongs in OTEL_EXPORTER_OTLP_HEADERS from a
	// Secret instead.
	Headers map[string]string `json:"headers,omitempty"`
}

// Metrics says how the runtime's metrics are scraped: always from the
// knc-runtime-metrics Service, and by a Prometheus Operator
// ServiceMonitor when ServiceMonitor.Enabled.
type Metrics struct {
	ServiceMonitor *ServiceMonitor `json:"serviceMonitor,omitempty"`
}

// ServiceMonitor is the monitoring.coreos.com/v1 ServiceMonitor knc build
// writes for the runtime when Enabled.
type ServiceMonitor struct {
	Enabled bool `json:"enabled,omitempty"`
	// Interval is the scrape interval, such as 30s; empty leaves it to
	// Prometheus.
	Interval string `json:"interval,omitempty"`
	// Labels are added to the ServiceMonitor, for the serviceMonitorSelector
	// of the Prometheus that should pick it up.
	Labels map[string]string `json:"labels,omitempty"`
}

// Memory sizes the runtime container's memory request and limit.
type Memory struct {
	Request string `json:"request,omitempty"`
	Limit   string `json:"limit,omitempty"`
}

// Storage sizes the JetStream volume.
type Storage struct {
	Size string `json:"size,omitempty"`
}

// NATSRuntime points the runtime at an external NATS cluster.
type NATSRuntime struct {
	URL               string `json:"url,omitempty"`
	CredentialsSecret string `json:"credentialsSecret,omitempty"`
}

// Defaults.
const (
	DefaultNamespace     = "default"
	DefaultClusterDomain = "cluster.local"
	Group                = "config.knc.dev"
	APIVersion           = Group + "/v1alpha1"
	Kind                 = "Config"
)

// Default returns the config used when a project has no knc.yaml.
func Default() *Config {
	return &Config{
		TypeMeta:         model.TypeMeta{APIVersion: APIVersion, Kind: Kind},
		DefaultNamespace: DefaultNamespace,
		ClusterDomain:    DefaultClusterDomain,
	}
}

// Find looks for knc.yaml in dir and its parents, stopping at the top of a
// git work tree. It returns "" when there is none.
func Find(dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		for _, name := range FileNames {
			p := filepath.Join(dir, name)
			if _, err := os.Stat(p); err == nil {
				return p, nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
		if _, err := os.Stat(filepath.Join(dir, ".git")); err == nil {
			return "", nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// Read loads and validates a config file. I/O errors are returned as err;
// problems with the content as diagnostics.
func Read(file string) (*Config, diag.List, error) {
	docs, diags, err := load.LoadFiles([]string{file})
	if err != nil {
		return nil, nil, err
	}
	if len(diags) > 0 {
		return nil, diags, nil
	}
	if len(docs) != 1 {
		// Point at the second document, or at the top of an empty file.
		pos := diag.Pos{File: file, Line: 1, Column: 1}
		if len(docs) > 1 {
			pos = docs[1].PosOf("")
		}
		return nil, diag.List{{Pos: pos, Message: fmt.Sprintf("must hold exactly one document, found %d", len(docs))}}, nil
	}
	doc := docs[0]
	cfg := Default()
	cfg.File = file
	diags = load.Decode(doc, cfg)
	var errs model.FieldErrors
	cfg.validate(&errs)
	for _, e := range errs {
		diags = append(diags, diag.Diagnostic{Pos: doc.PosOf(e.Path), Path: e.Path, Message: e.Message})
	}
	if len(diags) > 0 {
		return nil, diags, nil
	}
	return cfg, nil, nil
}

var (
	namespaceRE   = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	domainRE      = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	nameRE        = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	absoluteURIRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+`)
	sizeRE        = regexp.MustCompile(`^[0-9]+(Ki|Mi|Gi|Ti)?$`)
	natsURLRE     = regexp.MustCompile(`^(nats|tls)://`)
	// otlpEndpointRE is an http(s) URL with a host, or HOST:PORT.
	otlpEndpointRE = regexp.MustCompile(`^(https?://[^/?#\s]+(/[^\s]*)?|[^:/?#\s]+:[0-9]+)$`)
	headerNameRE   = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// intervalRE is a Prometheus duration as the ServiceMonitor CRD
	// accepts it, without the units longer than an hour.
	intervalRE = regexp.MustCompile(`^([0-9]+h)?([0-9]+m)?([0-9]+s)?([0-9]+ms)?$`)
)

// validate mirrors #Config in schema/config.cue.
func (c *Config) validate(errs *model.FieldErrors) {
	if c.APIVersion != APIVersion {
		errs.Add("apiVersion", "must be %q, not %q", APIVersion, c.APIVersion)
	}
	if c.Kind != Kind {
		errs.Add("kind", "must be %q, not %q", Kind, c.Kind)
	}
	if len(c.DefaultNamespace) > 63 || !namespaceRE.MatchString(c.DefaultNamespace) {
		errs.Add("defaultNamespace", "%q is not a valid namespace", c.DefaultNamespace)
	}
	if !domainRE.MatchString(c.ClusterDomain) {
		errs.Add("clusterDomain", "%q is not a valid DNS domain", c.ClusterDomain)
	}
	for i, e := range c.Exclude {
		if e == "" {
			errs.Add(fmt.Sprintf("exclude[%d]", i), "must not be empty")
		} else if _, err := filepath.Match(e, ""); err != nil {
			errs.Add(fmt.Sprintf("exclude[%d]", i), "%q is not a valid pattern: %v", e, err)
		}
	}
	if f := c.Features; f != nil {
		for name, v := range f.byName() {
			if v != "" && v != "enabled" && v != "disabled" {
				errs.Add("features["+name+"]", "must be \"enabled\" or \"disabled\", not %q", v)
			}
		}
	}
	for i, e := range c.External {
		p := fmt.Sprintf("external[%d]", i)
		if e.APIVersion == "" {
			errs.Add(p+".apiVersion", "must not be empty")
		}
		if e.Kind == "" {
			errs.Add(p+".kind", "must not be empty")
		}
		if !nameRE.MatchString(e.Name) {
			errs.Add(p+".name", "%q is not a valid name", e.Name)
		}
		if e.Namespace != "" && !namespaceRE.MatchString(e.Namespace) {
			errs.Add(p+".namespace", "%q is not a valid namespace", e.Namespace)
		}
		if e.URL != "" && !absoluteURIRE.MatchString(e.URL) {
			errs.Add(p+".url", "%q must be an absolute URL", e.URL)
		}
	}
	if r := c.Runtime; r != nil {
		if r.Replicas != nil && *r.Replicas < 1 {
			errs.Add("runtime.replicas", "must be at least 1, not %d", *r.Replicas)
		}
		switch r.Durability {
		case "", "file", "fsync":
		default:
			errs.Add("runtime.durability", "must be \"file\" or \"fsync\", not %q", r.Durability)
		}
		if r.MaxEventBytes != nil && *r.MaxEventBytes < 1024 {
			errs.Add("runtime.maxEventBytes", "must be at least 1024, not %d", *r.MaxEventBytes)
		}
		if r.TTL != nil && (*r.TTL < 1 || *r.TTL > 255) {
			errs.Add("runtime.ttl", "must be between 1 and 255, not %d", *r.TTL)
		}
		if r.Storage != nil && r.Storage.Size != "" && !sizeRE.MatchString(r.Storage.Size) {
			errs.Add("runtime.storage.size", "%q is not a size such as 10Gi", r.Storage.Size)
		}
		if r.Metrics != nil && r.Metrics.ServiceMonitor != nil {
			validateServiceMonitor(r.Metrics.ServiceMonitor, errs)
		}
		if r.NATS != nil {
			if r.NATS.URL != "" && !natsURLRE.MatchString(r.NATS.URL) {
				errs.Add("runtime.nats.url", "%q must start with nats:// or tls://", r.NATS.URL)
			}
			if r.NATS.CredentialsSecret != "" && !nameRE.MatchString(r.NATS.CredentialsSecret) {
				errs.Add("runtime.nats.credentialsSecret", "%q is not a valid name", r.NATS.CredentialsSecret)
			}
		}
		if t := r.Tracing; t != nil {
			t.validate(errs)
		}
		if u := r.UI; u != nil && u.RecentEvents != nil && (*u.RecentEvents < 0 || *u.RecentEvents > MaxRecentEvents) {
			errs.Add("runtime.ui.recentEvents", "must be between 0 and %d, not %d", MaxRecentEvents, *u.RecentEvents)
		}
	}
}

// validate mirrors #Tracing in schema/config.cue.
func (t *Tracing) validate(errs *model.FieldErrors) {
	if t.Endpoint == "" {
		errs.Add("runtime.tracing.endpoint", "is required: the URL of the OTLP receiver, such as http://otel-collector.observability:4318")
	} else if !otlpEndpointRE.MatchString(t.Endpoint) {
		errs.Add("runtime.tracing.endpoint", "%q must be an http:// or https:// URL, or HOST:PORT", t.Endpoint)
	}
	switch t.Protocol {
	case "", "grpc", "http":
	default:
		errs.Add("runtime.tracing.protocol", "must be \"grpc\" or \"http\", not %q", t.Protocol)
	}
	if r := t.SamplingRatio; r != nil && (*r < 0 || *r > 1) {
		errs.Add("runtime.tracing.samplingRatio", "must be between 0 and 1, not %g", *r)
	}
	for name := range t.Headers {
		if !headerNameRE.MatchString(name) {
			errs.Add("runtime.tracing.headers["+name+"]", "%q is not a valid header name", name)
		}
	}
}

// EnabledFeatures returns the enabled features: Knative's defaults, overridden by
// the config.
func (c *Config) EnabledFeatures() model.Features {
	f := model.DefaultFeatures()
	if c.Features == nil {
		return f
	}
	for name, v := range c.Features.byName() {
		if v != "" {
			f[name] = v == "enabled"
		}
	}
	return f
}

func validateServiceMonitor(sm *ServiceMonitor, errs *model.FieldErrors) {
	const path = "runtime.metrics.serviceMonitor"
	if sm.Interval != "" && (sm.Interval == "0s" || !intervalRE.MatchString(sm.Interval)) {
		errs.Add(path+".interval", "%q is not a scrape interval such as 30s or 1m", sm.Interval)
	}
	for _, k := range slices.Sorted(maps.Keys(sm.Labels)) {
		for _, msg := range validation.IsQualifiedName(k) {
			errs.Add(path+".labels["+k+"]", "%q is not a valid label key: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(sm.Labels[k]) {
			errs.Add(path+".labels["+k+"]", "%q is not a valid label value: %s", sm.Labels[k], msg)
		}
	}
}
