package runtimeconfig

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/pflag"
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
	// TestClockFile is for tests only: see KNC_TEST_CLOCK_FILE.
	TestClockFile string

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
		if err := set(f, c, f.DefaultFor(cmd)); err != nil {
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

// Set sets flag's setting from its text, as the flag reads it when it is
// given once.
func (c *Config) Set(flag, value string) error {
	f, ok := Lookup(flag)
	if !ok || f.Bind == nil {
		return fmt.Errorf("--%s is no setting of the runtime", flag)
	}
	if err := set(f, c, value); err != nil {
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
	{Name: "KNC_TEST_CLOCK_FILE", Usage: "for tests only, never in production: PingSources fire by the RFC 3339 time this file holds, not the wall clock; a test rewrites it to step every runtime that reads it through the ticks", Bind: func(c *Config) *string { return &c.TestClockFile }},
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
		if err := set(f, c, v); err != nil {
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

// set parses text into the field of c that f binds, as its flag reads it
// when it is given once on the command line: a list or map holds what
// text lists, not what it held before.
func set(f Field, c *Config, text string) error {
	fl := pflag.NewFlagSet(f.Flag, pflag.ContinueOnError)
	f.AddFlag(fl, c, "")
	if text == "[]" {
		// The help prints an empty list or map so; the flags read it
		// as one element "[]".
		switch p := f.Bind(c).(type) {
		case *[]string:
			*p = nil
			return nil
		case *map[string]string:
			*p = nil
			return nil
		}
	}
	return fl.Set(f.Flag, text)
}

// AddFlag gives fl the flag of f, with usage, which sets the field of c
// that f binds: the table's type is the flag's.
func (f Field) AddFlag(fl *pflag.FlagSet, c *Config, usage string) {
	name := f.Flag
	switch p := f.Bind(c).(type) {
	case *string:
		fl.StringVar(p, name, *p, usage)
	case *bool:
		fl.BoolVar(p, name, *p, usage)
	case *int:
		fl.IntVar(p, name, *p, usage)
	case *int64:
		fl.Int64Var(p, name, *p, usage)
	case *float32:
		fl.Float32Var(p, name, *p, usage)
	case *float64:
		fl.Float64Var(p, name, *p, usage)
	case *time.Duration:
		fl.DurationVar(p, name, *p, usage)
	case *[]string:
		if f.Type == "stringArray" {
			fl.StringArrayVar(p, name, *p, usage)
		} else {
			fl.StringSliceVar(p, name, *p, usage)
		}
	case *map[string]string:
		fl.StringToStringVar(p, name, *p, usage)
	default:
		panic(fmt.Sprintf("runtimeconfig: --%s binds a %T", f.Flag, p))
	}
}
