package cehttp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"

	"github.com/knc-dev/knc/internal/routing"
)

// CloudEvents 0.3 takes the SDK's path: its attributes differ from 1.0
// (schemaurl, datacontentencoding) and few senders still use it, so the
// hand-written codec of 1.0 is not worth doubling. An event of 0.3 stays
// 0.3 from ingress to delivery: Knative's conformance tests require that a
// Broker or Channel never upgrade an event's version.

// isV03 tells whether a binary-mode message's ce-specversion is 0.3.
func isV03(h http.Header) bool {
	v := h[headerSpecVersion]
	return len(v) > 0 && v[0] == event.CloudEventsVersionV03
}

// readV03Binary decodes a binary-mode 0.3 message with the SDK, which is
// what Knative does, and validates it.
func readV03Binary(h http.Header, data []byte) (e *event.Event, err error) {
	defer func() {
		// The SDK panics on some headers (a "Ce-" naming no attribute).
		if p := recover(); p != nil {
			e, err = nil, &ParseError{Reason: "malformed binary-mode event", Err: fmt.Errorf("undecodable event: %v", p)}
		}
	}()
	msg := sdkhttp.NewMessage(h, io.NopCloser(bytes.NewReader(data)))
	e, err = binding.ToEvent(context.Background(), msg)
	if err != nil {
		return nil, &ParseError{Reason: "malformed binary-mode event", Err: err}
	}
	return validateV03(e)
}

// validateV03 applies the SDK's checks of a 0.3 context, reporting a
// failure as a *ParseError.
func validateV03(e *event.Event) (*event.Event, error) {
	if err := e.Validate(); err != nil {
		return nil, &ParseError{Reason: "invalid CloudEvents 0.3 event", Err: err}
	}
	return e, nil
}

// encodeV03 returns the headers and body of the POST that delivers a 0.3
// event, written by the SDK's writer, in binary mode unless format is
// routing.FormatJSON.
func encodeV03(e *event.Event, format string) (http.Header, []byte, error) {
	req, err := http.NewRequest(http.MethodPost, "http://encoding.invalid/", nil)
	if err != nil {
		return nil, nil, err
	}
	ctx := binding.WithForceBinary(context.Background())
	if format == routing.FormatJSON {
		ctx = binding.WithForceStructured(context.Background())
	}
	if err := sdkhttp.WriteRequest(ctx, binding.ToMessage(e), req); err != nil {
		return nil, nil, fmt.Errorf("encoding event %s: %w", e.ID(), err)
	}
	var body []byte
	if req.Body != nil {
		if body, err = io.ReadAll(req.Body); err != nil {
			return nil, nil, fmt.Errorf("encoding event %s: %w", e.ID(), err)
		}
	}
	req.Header.Set("Prefer", "reply")
	return req.Header, body, nil
}
