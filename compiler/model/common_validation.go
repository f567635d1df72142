package model

import (
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/knc-dev/knc/runtime/cesql"
)

// These mirror the definitions of the same names in schema/common.cue.
var (
	nameRE          = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	namespaceRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	attributeNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
	durationRE      = regexp.MustCompile(`^P([0-9]+Y)?([0-9]+M)?([0-9]+W)?([0-9]+D)?(T([0-9]+H)?([0-9]+M)?([0-9]+([.,][0-9]+)?S)?)?$`)
	absoluteURIRE   = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9+.-]*://[^/?#]+`)
)

func validateName(errs *FieldErrors, path, name string) {
	n := utf8.RuneCountInString(name)
	switch {
	case n == 0:
		errs.Add(path, "must not be empty")
	case n > 253:
		errs.Add(path, "must be at most 253 characters, not %d", n)
	case !nameRE.MatchString(name):
		errs.Add(path, "%q is not a valid name: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit", name)
	}
}

func validateNamespace(errs *FieldErrors, path, ns string) {
	n := utf8.RuneCountInString(ns)
	switch {
	case n == 0:
		errs.Add(path, "must not be empty")
	case n > 63:
		errs.Add(path, "must be at most 63 characters, not %d", n)
	case !namespaceRE.MatchString(ns):
		errs.Add(path, "%q is not a valid namespace: use lowercase letters, digits and '-', starting and ending with a letter or digit", ns)
	}
}

func validateMeta(errs *FieldErrors, m *ObjectMeta) {
	validateName(errs, "metadata.name", m.Name)
	if m.Namespace != "" {
		validateNamespace(errs, "metadata.namespace", m.Namespace)
	}
	if m.Generation < 0 {
		errs.Add("metadata.generation", "must not be negative")
	}
}

func validateKReference(errs *FieldErrors, path string, r *KReference) {
	if r.APIVersion == "" {
		errs.Add(path+".apiVersion", "must not be empty")
	}
	if r.Kind == "" {
		errs.Add(path+".kind", "must not be empty")
	}
	validateName(errs, path+".name", r.Name)
	if r.Namespace != "" {
		validateNamespace(errs, path+".namespace", r.Namespace)
	}
}

// validateDestination checks @knc(rule=destination): a ref, a uri, or both,
// and an absolute uri when there is no ref.
func validateDestination(errs *FieldErrors, path string, d *Destination) {
	if d.Ref == nil && d.URI == "" {
		errs.Add(path, "needs a ref, a uri, or both")
		return
	}
	if d.Ref != nil {
		validateKReference(errs, path+".ref", d.Ref)
	}
	if d.URI == "" {
		return
	}
	if _, err := url.Parse(d.URI); err != nil {
		errs.Add(path+".uri", "%q is not a URI: %v", d.URI, unwrapURLError(err))
		return
	}
	if d.Ref == nil && !absoluteURIRE.MatchString(d.URI) {
		errs.Add(path+".uri", "%q must be an absolute URI such as http://host/path, or be given with a ref it is relative to", d.URI)
	}
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

func validateDuration(errs *FieldErrors, path, d string) {
	if !durationRE.MatchString(d) || d == "P" || strings.HasSuffix(d, "T") {
		errs.Add(path, "%q is not an ISO-8601 duration such as PT0.2S, PT5S or PT1M", d)
	}
}

func validateDelivery(errs *FieldErrors, path string, d *DeliverySpec, f Features) {
	if d.DeadLetterSink != nil {
		validateDestination(errs, path+".deadLetterSink", d.DeadLetterSink)
	}
	if d.Retry != nil && (*d.Retry < 0 || *d.Retry > 2147483647) {
		errs.Add(path+".retry", "must be between 0 and 2147483647, not %d", *d.Retry)
	}
	switch d.BackoffPolicy {
	case "", "linear", "exponential":
	default:
		errs.Add(path+".backoffPolicy", "must be \"linear\" or \"exponential\", not %q", d.BackoffPolicy)
	}
	if d.BackoffDelay != "" {
		validateDuration(errs, path+".backoffDelay", d.BackoffDelay)
	}
	if d.Timeout != "" {
		f.require(errs, path+".timeout", FeatureDeliveryTimeout)
		validateDuration(errs, path+".timeout", d.Timeout)
	}
	if d.RetryAfterMax != "" {
		f.require(errs, path+".retryAfterMax", FeatureDeliveryRetryAfter)
		validateDuration(errs, path+".retryAfterMax", d.RetryAfterMax)
	}
	switch d.Format {
	case "", "json", "binary":
	default:
		errs.Add(path+".format", "must be \"json\" or \"binary\", not %q", d.Format)
	}
}

func validateStatus(errs *FieldErrors, path string, s *Status) {
	if s.ObservedGeneration < 0 {
		errs.Add(path+".observedGeneration", "must not be negative")
	}
	for i, c := range s.Conditions {
		cp := path + ".conditions[" + itoa(i) + "]"
		if c.Type == "" {
			errs.Add(cp+".type", "must not be empty")
		}
		switch c.Status {
		case "True", "False", "Unknown":
		default:
			errs.Add(cp+".status", "must be \"True\", \"False\" or \"Unknown\", not %q", c.Status)
		}
		switch c.Severity {
		case "", "Warning", "Info":
		default:
			errs.Add(cp+".severity", "must be \"\", \"Warning\" or \"Info\", not %q", c.Severity)
		}
	}
}

// validateCESQL checks @knc(rule=cesql).
func validateCESQL(errs *FieldErrors, path, expr string) {
	if _, err := cesql.Parse(expr); err != nil {
		errs.Add(path, "%v", err)
	}
}
