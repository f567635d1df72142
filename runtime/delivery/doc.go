// Package delivery makes one delivery attempt of a CloudEvent to a
// subscriber and says what to do next: it classifies the response by the
// Knative data-plane contract, computes how long a retry waits, and builds
// the event sent to a dead-letter sink. Retrying itself is the caller's
// business (the engine retries through JetStream redelivery).
//
// Response classes:
//
//	200                          success; the body may hold a reply event
//	202, other 2xx               success; the body is never a reply
//	1xx, 3xx                     error, not retried (redirects are not followed)
//	400, 401, 403, other 4xx     rejected, not retried
//	404, 408, 409, 429, 5xx      error, retried
//	network error, timeout       error, retried
//
// A 200 whose body claims to be a CloudEvent but is not a valid one (or is
// over the reply size limit) is a failed, retryable attempt: Knative's
// broker answers such a reply with 502, which its dispatchers retry. With
// Options.StrictReply (a Trigger's delivery) so is a 200 whose non-empty
// body is no CloudEvent at all, as Knative's Broker filter has it; for a
// Subscription such a body is ignored, as Knative's Channel dispatcher does.
// The dead letter of a failed 2xx says 502, as Knative's does.
//
// Headers: Options.Header is added to the request (Kn-Namespace and the
// headers that pass through, see cehttp.PassThrough), and the pass-through
// headers of a reply come back in Result.ReplyHeader.
//
// Backoff: "linear" waits backoffDelay before every retry, as the Knative
// control-plane contract says (the object model and Knative's code differ);
// "exponential", the default, waits backoffDelay × 2^(n−1) before retry n.
// There is no jitter.
//
// Retry-After: the data-plane rule is that a Retry-After header on a 429 or
// 503 is honoured as the larger of it and the backoff, capped by
// retryAfterMax when that is set. knc therefore always honours Retry-After
// on those two codes (in delta-seconds or HTTP-date form); routing.Delivery
// RetryAfterMax > 0 caps it, and 0 leaves it uncapped. Retry-After on any
// other status is ignored.
//
// Dead letters carry Knative's extensions: knativeerrordest (the URL that
// failed, as a URI), knativeerrorcode (the last HTTP status, an integer) and
// knativeerrordata (the response body, base64-encoded and cut to 1024
// characters, as Knative does). When no response arrived, Knative reports
// 500 and "dispatch error: <error>", and so does knc.
//
// This package must not import cuelang.org/go, sigs.k8s.io/kustomize or any
// package of the compiler: it is part of the runtime.
package delivery
