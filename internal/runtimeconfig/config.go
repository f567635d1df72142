package runtimeconfig

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Config is the runtime's configuration: the flags of knc run and knc
// runtime, the environment and the ConfigMap knc build renders all fill
// it, through the rows of Fields and Environment.
type Config struct {
	AckWait                    time.Duration
	AdminAddr                  string
	BearerTokens               string
	BearerTokensReloadInterval time.Duration
	ClusterAddr                string
	ClusterDomain              string
	ClusterName                string
	ClusterRoutes              []string
	DataDir                    string
	Durability                 string
	Fsync                      bool
	HTTPAddr                   string
	IdleTimeout                time.Duration
	IngressShards              int
	KeptMaxAge                 time.Duration
	KeptMaxBytes               int64
	KubeAPIBurst               int
	KubeAPIQPS                 float32
	KubeContext                string
	Kubeconfig                 string
	LogFormat                  string
	LogLevel                   string
	MaxBodyBytes               int64
	MaxConcurrentRequests      int
	MaxHeaderBytes             int
	MaxStoreBytes              int64
	NATSAddr                   string
	NATSCA                     string
	NATSCreds                  string
	NATSSecretDir              string
	NATSURL                    string
	Namespaces                 []string
	ReadHeaderTimeout          time.Duration
	ReadTimeout                time.Duration
	Resync                     time.Duration
	ServerName                 string
	ShutdownTimeout            time.Duration
	StreamReplicas             int
	Table                      string
	TablePollInterval          time.Duration
	TLSCert                    string
	TLSKey                     string
	TracingEndpoint            string
	TracingHeaders             map[string]string
	TracingInsecure            bool
	TracingProtocol            string
	TracingSamplingRatio       float64
	TTL                        int
	UIRecentEvents             int
	WriteTimeout               time.Duration

	// Set from the environment only (see Environment): values that come
	// from the pod, or secrets kept out of the process's arguments.
	PodNamespace string
	PodName      string
	NATSUser     string
	NATSPassword string
	NATSToken    string

	// given holds the flags set on the command line or through the
	// environment, rather than left at their defaults.
	given map[string]bool
}

// New returns the configuration of cmd with every setting at its default.
func New(cmd Command) *Config {
	c := &Config{}
	for _, f := range Fields {
		if f.Bind == nil || f.Commands&cmd == 0 {
			continue
		}
		if err := set(f.Bind(c), f.DefaultFor(cmd), true); err != nil {
			panic(fmt.Sprintf("runtimeconfig: the default %q of --%s: %v", f.DefaultFor(cmd), f.Flag, err))
		}
	}
	return c
}

// Given reports whether flag was set, on the command line or through the
// environment, rather than left at its default.
func (c *Config) Given(flag string) bool { return c.given[flag] }

// MarkGiven records that flag was set on the command line.
func (c *Config) MarkGiven(flag string) {
	if c.given == nil {
		c.given = map[string]bool{}
	}
	c.given[flag] = true
}

// Set sets flag's setting from its text, as the flag reads it.
func (c *Config) Set(flag, value string) error {
	f, ok := Lookup(flag)
	if !ok || f.Bind == nil {
		return fmt.Errorf("--%s is no setting of the runtime", flag)
	}
	if err := set(f.Bind(c), value, false); err != nil {
		return fmt.Errorf("--%s %q: %w", flag, value, err)
	}
	c.MarkGiven(flag)
	return nil
}

// An Env is a variable of the environment the runtime reads.
type Env struct {
	// Name is the variable's name.
	Name string
	// Usage says what it sets.
	Usage string
	// Bind returns the field of c it sets.
	Bind func(c *Config) *string
}

// Environment are the variables that fill a Config alongside the flags.
// Besides them, knc runtime reads each ConfigMapKey of Fields from the
// environment (the Deployment takes the ConfigMap as its environment) for
// a flag not given on the command line.
var Environment = []Env{
	{Name: "KNC_NATS_PASSWORD", Usage: "password for --nats-url, from a Secret", Bind: func(c *Config) *string { return &c.NATSPassword }},
	{Name: "KNC_NATS_TOKEN", Usage: "token for --nats-url, from a Secret", Bind: func(c *Config) *string { return &c.NATSToken }},
	{Name: "KNC_NATS_USER", Usage: "user for --nats-url, from a Secret", Bind: func(c *Config) *string { return &c.NATSUser }},
	{Name: "POD_NAME", Usage: "the node's name in a JetStream cluster when --server-name is not given", Bind: func(c *Config) *string { return &c.PodName }},
	{Name: "POD_NAMESPACE", Usage: "the namespace knc runtime serves when --namespace is not given", Bind: func(c *Config) *string { return &c.PodNamespace }},
}

// FromEnvironment fills c from the environment that lookup reads (such as
// os.LookupEnv): the variables of Environment and, for knc runtime, the
// ConfigMap's key of each flag not given on the command line. A key set to
// the empty string is passed over, as the ConfigMap writes one for a
// setting knc.yaml leaves unset.
func (c *Config) FromEnvironment(cmd Command, lookup func(string) (string, bool)) error {
	for _, e := range Environment {
		if v, ok := lookup(e.Name); ok {
			*e.Bind(c) = v
		}
	}
	if cmd != Runtime {
		return nil
	}
	var errs []string
	for _, f := range Fields {
		if f.ConfigMapKey == "" || f.Bind == nil || f.Commands&Runtime == 0 || c.Given(f.Flag) {
			continue
		}
		v, ok := lookup(f.ConfigMapKey)
		if !ok || v == "" {
			continue
		}
		if err := set(f.Bind(c), v, true); err != nil {
			errs = append(errs, fmt.Sprintf("$%s (of --%s) %q: %v", f.ConfigMapKey, f.Flag, v, err))
			continue
		}
		c.MarkGiven(f.Flag)
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return nil
}

// set parses text into p, a field that Bind returned. replace makes a
// list or map start again rather than add to what it holds.
func set(p any, text string, replace bool) error {
	switch p := p.(type) {
	case *string:
		*p = text
	case *bool:
		v, err := strconv.ParseBool(text)
		if err != nil {
			return err
		}
		*p = v
	case *int:
		v, err := strconv.ParseInt(text, 0, strconv.IntSize)
		if err != nil {
			return err
		}
		*p = int(v)
	case *int64:
		v, err := strconv.ParseInt(text, 0, 64)
		if err != nil {
			return err
		}
		*p = v
	case *float32:
		v, err := strconv.ParseFloat(text, 32)
		if err != nil {
			return err
		}
		*p = float32(v)
	case *float64:
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return err
		}
		*p = v
	case *time.Duration:
		v, err := time.ParseDuration(text)
		if err != nil {
			return err
		}
		*p = v
	case *[]string:
		if replace {
			*p = nil
		}
		*p = append(*p, list(text)...)
	case *map[string]string:
		if replace {
			*p = nil
		}
		for _, pair := range list(text) {
			k, v, ok := strings.Cut(pair, "=")
			if !ok {
				return fmt.Errorf("%q is not NAME=VALUE", pair)
			}
			if *p == nil {
				*p = map[string]string{}
			}
			(*p)[k] = v
		}
	default:
		return fmt.Errorf("a field of type %T", p)
	}
	return nil
}

// list splits a comma-separated list; "[]", as the help prints an empty
// one, is empty.
func list(text string) []string {
	text = strings.TrimSuffix(strings.TrimPrefix(text, "["), "]")
	if text == "" {
		return nil
	}
	return strings.Split(text, ",")
}
