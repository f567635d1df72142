package project

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"github.com/knc-dev/knc/compiler/model"
	"github.com/knc-dev/knc/internal/inputfs"
)

// FileNames are the names knc looks for, in order.
var FileNames = []string{"knc.yaml", "knc.yml"}

// Config is knc.yaml as Go code reads it: the value #Config of
// schema/config.cue gives, defaults filled in. The constraints, defaults
// and documentation of each field are in the schema alone; these types
// only hold what it decoded (TestTypesHoldEverySchemaField keeps every
// field of the schema reachable here).
type Config struct {
	model.TypeMeta   `json:",inline"`
	DefaultNamespace string            `json:"defaultNamespace,omitempty"`
	ClusterDomain    string            `json:"clusterDomain,omitempty"`
	Exclude          []string          `json:"exclude,omitempty"`
	Features         map[string]string `json:"features,omitempty"`
	External         []ExternalObject  `json:"external,omitempty"`
	Sources          []SourceKind      `json:"sources,omitempty"`
	PingDefaults     *PingDefaults     `json:"pingDefaults,omitempty"`
	Runtime          *Runtime          `json:"runtime,omitempty"`

	// File is where the config was read from; empty for the defaults.
	File string `json:"-"`
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

// PingDefaults mirror Knative's config-ping-defaults ConfigMap.
type PingDefaults struct {
	DataMaxSize *int64 `json:"data-max-size,omitempty"`
}

// PingDataMaxSize is the bound on a PingSource's data, -1 for none.
func (c *Config) PingDataMaxSize() int64 {
	if c == nil || c.PingDefaults == nil || c.PingDefaults.DataMaxSize == nil {
		return -1
	}
	return *c.PingDefaults.DataMaxSize
}

// SourceKind names a kind whose objects are event sources.
type SourceKind struct {
	Group string `json:"group"`
	Kind  string `json:"kind"`
}

// IsSource says whether objects of group and kind are event sources: the
// group is sources.knative.dev, the kind ends in Source, or knc.yaml lists
// the kind under sources.
func (c *Config) IsSource(group, kind string) bool {
	if group == model.GroupSources || strings.HasSuffix(kind, "Source") {
		return true
	}
	if c == nil {
		return false
	}
	for _, s := range c.Sources {
		if s.Group == group && s.Kind == kind {
			return true
		}
	}
	return false
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
	KeptLetters   *KeptLetters `json:"keptLetters,omitempty"`
}

// KeptLetters bounds the store of kept letters (knc dlq), per namespace:
// the oldest letters are evicted, and counted, to stay within MaxSize, and
// letters older than MaxAge are removed.
type KeptLetters struct {
	// MaxSize is a Kubernetes quantity such as 1Gi.
	MaxSize string `json:"maxSize,omitempty"`
	// MaxAge is a Go duration such as 168h.
	MaxAge string `json:"maxAge,omitempty"`
}

// RuntimeUI configures the live page the runtime serves at /ui.
type RuntimeUI struct {
	RecentEvents *int64 `json:"recentEvents,omitempty"`
}

// Tracing makes the runtime export OpenTelemetry spans over OTLP.
type Tracing struct {
	Endpoint      string            `json:"endpoint,omitempty"`
	Protocol      string            `json:"protocol,omitempty"`
	Insecure      bool              `json:"insecure,omitempty"`
	SamplingRatio *float64          `json:"samplingRatio,omitempty"`
	Headers       map[string]string `json:"headers,omitempty"`
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
	Enabled  bool              `json:"enabled,omitempty"`
	Interval string            `json:"interval,omitempty"`
	Labels   map[string]string `json:"labels,omitempty"`
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

// Names of knc.yaml's kind.
const (
	Group      = "config.knc.dev"
	APIVersion = Group + "/v1alpha1"
	Kind       = "Config"
)

// Find looks for knc.yaml in dir and its parents, stopping at the top of a
// git work tree. It returns "" when there is none.
func Find(fsys inputfs.FS, dir string) (string, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	for {
		for _, name := range FileNames {
			p := filepath.Join(dir, name)
			if _, err := fsys.Stat(p); err == nil {
				return p, nil
			} else if !errors.Is(err, fs.ErrNotExist) {
				return "", err
			}
		}
		if _, err := fsys.Stat(filepath.Join(dir, ".git")); err == nil {
			return "", nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

// EnabledFeatures returns the features knc checks objects against, as the
// config sets them or, where it is silent, as the schema defaults them.
func (c *Config) EnabledFeatures() model.Features {
	f := model.Features{}
	for _, name := range model.FeatureNames {
		f[name] = c.Features[name] == "enabled"
	}
	return f
}
