package model

import "fmt"

// FieldError is a problem with one field of one object. Path is relative to
// the object, such as spec.subscriber.ref.name.
type FieldError struct {
	Path    string
	Message string
}

// FieldErrors collects the problems of one object.
type FieldErrors []FieldError

// Add records a problem at path.
func (e *FieldErrors) Add(path, format string, args ...any) {
	*e = append(*e, FieldError{Path: path, Message: fmt.Sprintf(format, args...)})
}
