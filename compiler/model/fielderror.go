package model

import "fmt"

// FieldError is a problem with one field of one object. Path is relative to
// the object, such as spec.subscriber.ref.name.
type FieldError struct {
	Path    string
	Message string
	// Warning marks a check knc makes beyond Knative's admission: Knative
	// admits the object, knc points out a likely mistake.
	Warning bool
}

// FieldErrors collects the problems of one object.
type FieldErrors []FieldError

// Add records a problem at path that Knative's admission refuses too.
func (e *FieldErrors) Add(path, format string, args ...any) {
	*e = append(*e, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}

// Warn records a problem at path that Knative admits.
func (e *FieldErrors) Warn(path, format string, args ...any) {
	*e = append(*e, FieldError{Path: path, Message: fmt.Sprintf(format, args...), Warning: true})
}

// HasErrors reports whether any problem is more than a warning.
func (e FieldErrors) HasErrors() bool {
	for _, fe := range e {
		if !fe.Warning {
			return true
		}
	}
	return false
}
