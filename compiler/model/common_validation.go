package model

import (
	"crypto/x509"
	"encoding/pem"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/knc-dev/knc/compiler/load"
	"github.com/knc-dev/knc/internal/cesql"
)

// These mirror the definitions of the same names in schema/common.cue.
var (
	nameRE          = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	namespaceRE     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	attributeNameRE = regexp.MustCompile(`^[a-z][a-z0-9]*$`)
)

func nameProblem(name string) string {
	switch n := utf8.RuneCountInString(name); {
	case n == 0:
		return "must not be empty"
	case n > 253:
		return "must be at most 253 characters, not " + itoa(n)
	case !nameRE.MatchString(name):
		return "\"" + name + "\" is not a valid name: use lowercase letters, digits, '-' and '.', starting and ending with a letter or digit"
	}
	return ""
}

func namespaceProblem(ns string) string {
	switch n := utf8.RuneCountInString(ns); {
	case n == 0:
		return "must not be empty"
	case n > 63:
		return "must be at most 63 characters, not " + itoa(n)
	case !namespaceRE.MatchString(ns):
		return "\"" + ns + "\" is not a valid namespace: use lowercase letters, digits and '-', starting and ending with a letter or digit"
	}
	return ""
}

// validateMeta checks what the Kubernetes API server checks of every object.
func validateMeta(errs *FieldErrors, m *ObjectMeta) {
	if p := nameProblem(m.Name); p != "" {
		errs.Add("metadata.name", "%s", p)
	}
	if m.Namespace != "" {
		if p := namespaceProblem(m.Namespace); p != "" {
			errs.Add("metadata.namespace", "%s", p)
		}
	}
	if m.Generation < 0 {
		errs.Add("metadata.generation", "must not be negative")
	}
	// The API server's own checks of labels and annotations.
	for _, k := range sortedKeys(m.Labels) {
		p := load.JoinKey("metadata.labels", k)
		for _, msg := range validation.IsQualifiedName(k) {
			errs.Add(p, "the key %q is not a valid label key: %s", k, msg)
		}
		for _, msg := range validation.IsValidLabelValue(m.Labels[k]) {
			errs.Add(p, "%q is not a valid label value: %s", m.Labels[k], msg)
		}
	}
	for _, k := range sortedKeys(m.Annotations) {
		// Annotation keys follow the rule of label keys, but in any case.
		for _, msg := range validation.IsQualifiedName(strings.ToLower(k)) {
			errs.Add(load.JoinKey("metadata.annotations", k), "the key %q is not a valid annotation key: %s", k, msg)
		}
	}
	if err := apivalidation.ValidateAnnotationsSize(m.Annotations); err != nil {
		errs.Add("metadata.annotations", "%v", err)
	}
}

// refContext is what Knative's validation of a reference depends on.
type refContext struct {
	features Features
	// parentNamespace is set where Knative refuses a reference to another
	// namespace than the object's own (a Channel's dead-letter sink).
	parentNamespace string
}

// validateKReference checks a reference as Knative's KReference validation
// does; names Knative does not check but no object can have are warnings.
func validateKReference(errs *FieldErrors, path string, r *KReference, rc refContext) {
	if r.Name == "" {
		errs.Add(path+".name", "must not be empty")
	} else if p := nameProblem(r.Name); p != "" {
		errs.Warn(path+".name", "%s; Knative admits it, but no object has such a name", p)
	}
	if rc.features[FeatureKReferenceGroup] {
		if r.APIVersion == "" && r.Group == "" {
			errs.Add(path+".apiVersion", "must not be empty unless group is given")
		}
		if r.APIVersion != "" && r.Group != "" && !strings.HasPrefix(r.APIVersion, r.Group) {
			errs.Add(path+".group", "%q and apiVersion %q name different API groups; give only one of them", r.Group, r.APIVersion)
		}
	} else {
		if r.Group != "" {
			rc.features.require(errs, path+".group", FeatureKReferenceGroup)
		}
		if r.APIVersion == "" {
			errs.Add(path+".apiVersion", "must not be empty")
		}
	}
	if r.Kind == "" {
		errs.Add(path+".kind", "must not be empty")
	}
	if r.Namespace != "" {
		if rc.parentNamespace != "" && r.Namespace != rc.parentNamespace {
			errs.Add(path+".namespace", "%q differs from the object's namespace %q; Knative allows no reference to another namespace here", r.Namespace, rc.parentNamespace)
		} else if p := namespaceProblem(r.Namespace); p != "" {
			errs.Warn(path+".namespace", "%s; Knative admits it, but no namespace has such a name", p)
		}
	}
}

// validateDestination checks @knc(rule=destination) as Knative's Destination
// validation does: a ref, a uri, or a ref with a relative uri; an absolute
// uri (scheme and host) without a ref; CACerts that parse as a PEM
// certificate where Knative reads them.
func validateDestination(errs *FieldErrors, path string, d *Destination, rc refContext) {
	if d.Ref == nil && d.URI == nil {
		errs.Add(path, "needs a ref, a uri, or both")
		return
	}
	var u *url.URL
	if d.URI != nil {
		var err error
		if u, err = url.Parse(*d.URI); err != nil {
			errs.Add(path+".uri", "%q is not a URI: %v", *d.URI, unwrapURLError(err))
			return
		}
	}
	switch {
	case d.Ref != nil && u != nil && u.IsAbs():
		errs.Add(path+".uri", "%q is absolute, so it cannot be given with a ref; remove the ref, or make the uri relative to the ref's address", *d.URI)
		return
	case d.Ref == nil && (!u.IsAbs() || u.Host == ""):
		errs.Add(path+".uri", "%q must be an absolute URI such as http://host/path, or be given with a ref it is relative to", *d.URI)
		return
	case d.Ref != nil && u == nil:
		validateKReference(errs, path+".ref", d.Ref, rc)
		if d.CACerts != nil && caCertsProblem(*d.CACerts) != "" {
			errs.Warn(path+".CACerts", "%s; Knative does not check CACerts next to a ref alone, but they would not be usable", caCertsProblem(*d.CACerts))
		}
		return
	}
	if d.Ref != nil {
		// Knative does not validate a ref that has a uri beside it; knc
		// still needs it to resolve the address.
		var refErrs FieldErrors
		validateKReference(&refErrs, path+".ref", d.Ref, rc)
		for _, e := range refErrs {
			errs.Warn(e.Path, "%s (Knative does not check a ref given with a uri, but it cannot be resolved)", strings.TrimSuffix(e.Message, "; Knative admits it, but no object has such a name"))
		}
	}
	if d.CACerts != nil {
		if p := caCertsProblem(*d.CACerts); p != "" {
			errs.Add(path+".CACerts", "%s", p)
		}
	}
}

// caCertsProblem says why certs are not a PEM certificate, as Knative's
// check reads them: the first PEM block must be a parsable CERTIFICATE.
func caCertsProblem(certs string) string {
	block, _ := pem.Decode([]byte(certs))
	if block == nil {
		return "is not a PEM-encoded certificate"
	}
	if block.Type != "CERTIFICATE" {
		return "holds a PEM " + block.Type + " block, not a CERTIFICATE"
	}
	if _, err := x509.ParseCertificate(block.Bytes); err != nil {
		return "is not a valid certificate: " + err.Error()
	}
	return ""
}

func unwrapURLError(err error) error {
	if ue, ok := err.(*url.Error); ok {
		return ue.Err
	}
	return err
}

const durationHint = "an ISO-8601 duration such as PT0.2S, PT5S or PT1M"

func validateDelivery(errs *FieldErrors, path string, d *DeliverySpec, rc refContext) {
	f := rc.features
	if d.DeadLetterSink != nil {
		validateDestination(errs, path+".deadLetterSink", d.DeadLetterSink, rc)
	}
	if d.Retry != nil && (*d.Retry < 0 || *d.Retry > 2147483647) {
		errs.Add(path+".retry", "must be between 0 and 2147483647, not %d", *d.Retry)
	}
	if d.BackoffPolicy != nil {
		switch *d.BackoffPolicy {
		case "linear", "exponential":
		default:
			errs.Add(path+".backoffPolicy", "must be \"linear\" or \"exponential\", not %q", *d.BackoffPolicy)
		}
	}
	if d.BackoffDelay != nil {
		if p, _, err := ParseDuration(*d.BackoffDelay); err != nil {
			errs.Add(path+".backoffDelay", "%q is not %s", *d.BackoffDelay, durationHint)
		} else if p.IsNegative() {
			errs.Warn(path+".backoffDelay", "%q is negative; Knative admits it and retries at once, as knc does", *d.BackoffDelay)
		}
	}
	if d.Timeout != nil && f.require(errs, path+".timeout", FeatureDeliveryTimeout) {
		if p, _, err := ParseDuration(*d.Timeout); err != nil {
			errs.Add(path+".timeout", "%q is not %s", *d.Timeout, durationHint)
		} else if p.IsZero() {
			errs.Add(path+".timeout", "%q is zero; give a positive duration, or remove the field for no timeout", *d.Timeout)
		} else if p.IsNegative() {
			errs.Warn(path+".timeout", "%q is negative; Knative admits it, and every request would time out at once", *d.Timeout)
		}
	}
	if d.RetryAfterMax != nil && f.require(errs, path+".retryAfterMax", FeatureDeliveryRetryAfter) {
		if p, _, err := ParseDuration(*d.RetryAfterMax); err != nil || p.IsNegative() {
			errs.Add(path+".retryAfterMax", "%q is not a non-negative %s", *d.RetryAfterMax, durationHint)
		}
	}
	if d.Format != nil {
		switch *d.Format {
		case "json", "binary":
		default:
			errs.Add(path+".format", "must be \"json\" or \"binary\", not %q", *d.Format)
		}
	}
}

// validateStatus checks a status knc would write. The API server drops the
// status of a created object, so every problem here is a warning.
func validateStatus(errs *FieldErrors, path string, s *Status) {
	if s.ObservedGeneration < 0 {
		errs.Warn(path+".observedGeneration", "must not be negative")
	}
	for i, c := range s.Conditions {
		cp := path + ".conditions[" + itoa(i) + "]"
		if c.Type == "" {
			errs.Warn(cp+".type", "must not be empty")
		}
		switch c.Status {
		case "True", "False", "Unknown":
		default:
			errs.Warn(cp+".status", "must be \"True\", \"False\" or \"Unknown\", not %q", c.Status)
		}
		switch c.Severity {
		case "", "Warning", "Info":
		default:
			errs.Warn(cp+".severity", "must be \"\", \"Warning\" or \"Info\", not %q", c.Severity)
		}
	}
}

// validateCESQL checks @knc(rule=cesql). Text the CESQL lexer cannot read
// is a warning: Knative admits the expression and filters as if the text
// were not there, and so does knc's runtime.
func validateCESQL(errs *FieldErrors, path, expr string) {
	x, err := cesql.Parse(expr)
	if err != nil {
		errs.Add(path, "%v", err)
		return
	}
	for _, s := range x.Skipped() {
		errs.Warn(path, "CESQL cannot read %q at %d:%d of %q and leaves it out; Knative admits the expression and filters as if %q were not there: remove it, or quote it in a string", s.Text, s.Line, s.Column, expr, s.Text)
	}
}
