package cehttp

import (
	"errors"
	"fmt"
)

// ErrTooLarge reports a body over the configured limit. An ingress answers
// it with 413 Content Too Large.
var ErrTooLarge = errors.New("cloudevent body exceeds the size limit")

// ParseError reports a message that is not a valid CloudEvent. An ingress
// answers it with 400 Bad Request.
type ParseError struct {
	// Attribute is the CloudEvents attribute at fault, or "" when the message
	// as a whole is (malformed JSON, no content mode).
	Attribute string
	// Reason says what is wrong, in words a sender can act on.
	Reason string
	// Err is the underlying error, if any.
	Err error
}

func (e *ParseError) Error() string {
	msg := "invalid cloudevent: "
	if e.Attribute != "" {
		msg += e.Attribute + ": "
	}
	msg += e.Reason
	if e.Err != nil {
		msg = fmt.Sprintf("%s: %v", msg, e.Err)
	}
	return msg
}

func (e *ParseError) Unwrap() error { return e.Err }

func attrError(attr, reason string, err error) *ParseError {
	return &ParseError{Attribute: attr, Reason: reason, Err: err}
}
