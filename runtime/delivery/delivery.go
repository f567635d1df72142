package delivery

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"

	"github.com/knc-dev/knc/internal/routing"
	"github.com/knc-dev/knc/runtime/cehttp"
)

// Defaults of a Sender.
const (
	DefaultMaxReplyBytes = 4 << 20
	// MaxErrorBodyBytes is how much of a failed response's body a Result
	// keeps: the most that knativeerrordata can show.
	MaxErrorBodyBytes = errorDataMaxChars / 4 * 3
	// maxDrainBytes bounds how much of an unread body is discarded to keep
	// the connection; beyond it, closing the connection is cheaper.
	maxDrainBytes = 256 << 10
)

// Result is the outcome of one HTTP delivery attempt.
type Result struct {
	// StatusCode is the response status, 0 on a network error or timeout.
	StatusCode int
	// Retryable tells whether a failed attempt may be retried.
	Retryable bool
	// Success tells whether the subscriber accepted the event.
	Success bool
	// Reply is the event in a 200 response's body, if any.
	Reply *event.Event
	// ReplyHeader holds the response headers that pass through with the
	// reply (cehttp.PassThrough), when there is a Reply.
	ReplyHeader http.Header
	// NotAnEvent tells that a 200 response had a body that is no
	// CloudEvent; with Options.StrictReply that is a failed attempt.
	NotAnEvent bool
	// RetryAfter is the Retry-After of a 429 or 503 response, else 0.
	RetryAfter time.Duration
	// Body is the start of a failed response's body, for knativeerrordata.
	Body []byte
	// Err is the transport or reply error, if any.
	Err error
}

// Sender posts events over HTTP. It is safe for concurrent use.
type Sender struct {
	// Client sends the requests. It must not follow redirects.
	Client *http.Client
	// MaxReplyBytes bounds a reply's body; 0 means no limit.
	MaxReplyBytes int64

	// direct sends the plain-HTTP requests of defaultClient, the Client
	// NewSender made (see directClient); a Client set by the caller sends
	// everything itself.
	direct        *directClient
	defaultClient *http.Client
}

// Option configures a Sender.
type Option func(*Sender, *http.Transport)

// WithMaxReplyBytes sets Sender.MaxReplyBytes.
func WithMaxReplyBytes(n int64) Option {
	return func(s *Sender, _ *http.Transport) { s.MaxReplyBytes = n }
}

// NewSender returns a Sender whose transport keeps many connections alive
// to few hosts: a runtime delivers to a handful of subscribers, each
// concurrently, and a connection set up per event would cost more than the
// event.
func NewSender(opts ...Option) *Sender {
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	transport := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		MaxIdleConns:          1024,
		MaxIdleConnsPerHost:   256,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: time.Second,
		// Payloads are small and often already compressed; asking for gzip
		// would cost CPU on both ends for replies.
		DisableCompression: true,
		ForceAttemptHTTP2:  true,
	}
	s := &Sender{MaxReplyBytes: DefaultMaxReplyBytes}
	for _, opt := range opts {
		opt(s, transport)
	}
	s.Client = &http.Client{
		Transport: transport,
		// A 3xx is an error by the data-plane contract, not a hint to
		// follow.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	s.direct, s.defaultClient = newDirectClient(transport, dialer), s.Client
	return s
}

// Options are the parameters of one attempt besides the event and URL.
type Options struct {
	// Format is routing.FormatBinary or routing.FormatJSON.
	Format string
	// Timeout bounds the attempt; 0 means no per-attempt timeout.
	Timeout time.Duration
	// Header is added to the request: Kn-Namespace and the headers that
	// pass through (cehttp.PassThrough). It must not hold ce- headers.
	Header http.Header
	// StrictReply makes a 200 whose body is not empty and not a CloudEvent
	// a failed, retryable attempt, as Knative's Broker filter treats it
	// (knative/eventing pkg/broker/filter/filter_handler.go answers it with
	// 502). Knative's Channel dispatcher ignores such a body instead.
	StrictReply bool
	// OmitExtension names an extension the request leaves out: Knative's
	// Broker filter removes knativebrokerttl before it delivers.
	OmitExtension string
	// Encoded, when it was made for this Format and OmitExtension, is
	// the event's request as Encode made it: the deliveries of one event
	// share it rather than each encoding the event again.
	Encoded *Encoded
}

// Encoded is an event's request headers and body in one format, without
// what differs between deliveries (the URL, Options.Header). It is never
// modified once made, so concurrent deliveries share it.
type Encoded struct {
	format, omit string
	header       http.Header
	body         []byte
}

// Encode encodes e for requests in format without the extension omit
// (none when empty), as Send does.
func Encode(e *event.Event, format, omit string) (*Encoded, error) {
	h, body, err := cehttp.Encode(e, format)
	if err != nil {
		return nil, err
	}
	enc := &Encoded{format: format, omit: omit, header: h, body: body}
	if omit == "" || !hasExtension(e, omit) {
		return enc, nil
	}
	if _, binary := h["Ce-Specversion"]; binary {
		// h is this encoding's own.
		h.Del("Ce-" + omit)
		return enc, nil
	}
	c := e.Clone()
	_ = c.Context.SetExtension(omit, nil)
	if enc.header, enc.body, err = cehttp.Encode(&c, format); err != nil {
		return nil, err
	}
	return enc, nil
}

// For tells whether enc was made for requests in format without omit.
func (enc *Encoded) For(format, omit string) bool {
	return enc != nil && enc.format == format && enc.omit == omit
}

// Attempt posts e once to url in the given format (routing.FormatBinary or
// routing.FormatJSON), bounded by timeout (0 = no per-attempt timeout), and
// classifies the response; it is Send without headers.
func (s *Sender) Attempt(ctx context.Context, e *event.Event, url, format string, timeout time.Duration) Result {
	return s.Send(ctx, e, url, Options{Format: format, Timeout: timeout})
}

// Send posts e once to url as o says and classifies the response. It
// always drains and closes the response body so that the connection is
// reused. A cancelled ctx gives a retryable result with Err set; the caller
// tells it from a subscriber timeout by ctx.Err().
func (s *Sender) Send(ctx context.Context, e *event.Event, url string, o Options) Result {
	if o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Timeout)
		defer cancel()
	}
	enc := o.Encoded
	if !enc.For(o.Format, o.OmitExtension) {
		var err error
		if enc, err = Encode(e, o.Format, o.OmitExtension); err != nil {
			// A request that cannot be built will not build on a retry
			// either.
			return Result{Err: fmt.Errorf("building request for %s: %w", url, err)}
		}
	}
	resp, err := s.post(ctx, url, enc, o.Header)
	if err != nil {
		var built *buildError
		if errors.As(err, &built) {
			return Result{Err: err}
		}
		return Result{Retryable: true, Err: fmt.Errorf("delivering to %s: %w", url, err)}
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// What follows a 101 on the connection is another protocol, not a
		// body: reading it would last as long as the subscriber keeps the
		// connection open, past any timeout (the Transport hands such a
		// connection over and no longer watches the context).
		_ = resp.Body.Close()
		return classify(resp.StatusCode)
	}
	defer closeBody(resp.Body)
	r := classify(resp.StatusCode)
	switch {
	case resp.StatusCode == http.StatusOK:
		reply, err := cehttp.ReadReply(resp, s.MaxReplyBytes)
		if err != nil {
			r.Success, r.Retryable = false, true
			r.Err = fmt.Errorf("reading reply from %s: %w", url, err)
			return r
		}
		r.Reply = reply
		if reply != nil {
			r.ReplyHeader = cehttp.PassThrough(resp.Header)
			break
		}
		// Like Knative, one byte tells an empty body from one that is no
		// CloudEvent.
		var first [1]byte
		if n, _ := io.ReadFull(resp.Body, first[:]); n > 0 {
			r.NotAnEvent = true
			if o.StrictReply {
				rest, _ := io.ReadAll(io.LimitReader(resp.Body, MaxErrorBodyBytes-1))
				r.Success, r.Retryable = false, true
				r.Body = append(first[:1:1], rest...)
				r.Err = fmt.Errorf("the 200 response of %s has a body that is not a CloudEvent: a response must be empty or a valid CloudEvent", url)
			}
		}
	case !r.Success:
		r.Body, _ = io.ReadAll(io.LimitReader(resp.Body, MaxErrorBodyBytes))
		if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable {
			r.RetryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
		}
	}
	return r
}

// buildError is an error of building a request, which no retry mends.
type buildError struct{ err error }

func (e *buildError) Error() string { return e.err.Error() }
func (e *buildError) Unwrap() error { return e.err }

// post sends enc to url with the headers extra besides enc's. enc's
// headers are shared with other deliveries: the direct client writes both
// sets without merging them, and only a request for the Transport gets a
// merged copy.
func (s *Sender) post(ctx context.Context, url string, enc *Encoded, extra http.Header) (*http.Response, error) {
	req, err := cehttp.NewPost(ctx, url, enc.body)
	if err != nil {
		return nil, &buildError{fmt.Errorf("building request for %s: %w", url, err)}
	}
	req.Header = enc.header
	if s.Client == s.defaultClient && s.direct != nil && s.direct.canSend(req, extra) {
		return s.direct.roundTrip(req, extra)
	}
	h := make(http.Header, len(enc.header)+len(extra))
	for name, values := range enc.header {
		h[name] = values
	}
	for name, values := range extra {
		h[name] = values
	}
	req.Header = h
	return s.send(req)
}

// hasExtension tells whether e has the extension name, without the copy of
// the extensions that Event.Extensions makes of a 1.0 event.
func hasExtension(e *event.Event, name string) bool {
	if ec, ok := e.Context.(*event.EventContextV1); ok {
		_, has := ec.Extensions[name]
		return has
	}
	_, has := e.Extensions()[name]
	return has
}

// send sends req. A Client that follows no redirect (as Client must not),
// keeps no cookies and sets no timeout of its own adds nothing to its
// Transport but a copy of the headers for redirects, so the Transport gets
// the request directly.
func (s *Sender) send(req *http.Request) (*http.Response, error) {
	c := s.Client
	if c.Jar != nil || c.Timeout != 0 || c.CheckRedirect == nil {
		return c.Do(req)
	}
	t := c.Transport
	if t == nil {
		t = http.DefaultTransport
	}
	return t.RoundTrip(req)
}

func closeBody(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, maxDrainBytes))
	_ = body.Close()
}

// classify applies the data-plane response table to a status code.
func classify(code int) Result {
	r := Result{StatusCode: code}
	switch {
	case code >= 200 && code < 300:
		r.Success = true
	case code == http.StatusNotFound, code == http.StatusRequestTimeout,
		code == http.StatusConflict, code == http.StatusTooManyRequests,
		code >= 500:
		r.Retryable = true
	}
	return r
}

// parseRetryAfter reads a Retry-After value, delta-seconds or HTTP-date,
// as a wait from now; anything else, or a time in the past, is 0.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil {
		if secs <= 0 {
			return 0
		}
		if secs > int64(math.MaxInt64/time.Second) {
			return time.Duration(math.MaxInt64)
		}
		return time.Duration(secs) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}

// Backoff returns how long retry n (n = 1 for the first retry) waits under
// policy: "linear" waits delay every time, "exponential" (and "", Knative's
// default) waits delay × 2^(n−1). The result saturates instead of
// overflowing.
func Backoff(policy string, delay time.Duration, n int) time.Duration {
	if n < 1 || delay <= 0 {
		return 0
	}
	if policy == routing.BackoffLinear {
		return delay
	}
	shift := n - 1
	if shift >= 63 || delay > time.Duration(math.MaxInt64)>>shift {
		return time.Duration(math.MaxInt64)
	}
	return delay << shift
}

// RetryDelay returns how long to wait before retry n after the failed
// attempt r under d: the backoff, or the Retry-After of a 429 or 503 when
// that is longer, capped by d.RetryAfterMax when it is set. A nil d means
// no backoff.
func RetryDelay(d *routing.Delivery, n int, r Result) time.Duration {
	var backoff, retryAfterMax time.Duration
	if d != nil {
		backoff = Backoff(d.BackoffPolicy, time.Duration(d.BackoffDelay), n)
		retryAfterMax = time.Duration(d.RetryAfterMax)
	}
	retryAfter := r.RetryAfter
	if r.StatusCode != http.StatusTooManyRequests && r.StatusCode != http.StatusServiceUnavailable {
		retryAfter = 0
	}
	if retryAfterMax > 0 && retryAfter > retryAfterMax {
		retryAfter = retryAfterMax
	}
	return max(backoff, retryAfter)
}

// Extensions a dead-lettered event carries.
const (
	ExtensionErrorDest = "knativeerrordest"
	ExtensionErrorCode = "knativeerrorcode"
	ExtensionErrorData = "knativeerrordata"
	errorDataMaxChars  = 1024
)

// DeadLetter returns a copy of e for the dead-letter sink, with
// knativeerrordest, knativeerrorcode and knativeerrordata describing the
// failed attempt r to failedURL. The payload is untouched.
func DeadLetter(e *event.Event, failedURL string, r Result) *event.Event {
	dl := e.Clone()
	if u, err := url.Parse(failedURL); err == nil {
		_ = dl.Context.SetExtension(ExtensionErrorDest, types.URI{URL: *u})
	} else {
		_ = dl.Context.SetExtension(ExtensionErrorDest, failedURL)
	}
	code, body := r.StatusCode, r.Body
	if code/100 == 2 {
		// A 2xx fails only when what it holds is not a CloudEvent; Knative's
		// Broker filter reports that as 502.
		code = http.StatusBadGateway
	}
	if code == 0 {
		code = http.StatusInternalServerError
		err := r.Err
		if err == nil {
			err = errors.New("no response")
		}
		body = []byte("dispatch error: " + err.Error())
	}
	_ = dl.Context.SetExtension(ExtensionErrorCode, int32(code))
	if len(body) > 0 {
		if len(body) > MaxErrorBodyBytes {
			body = body[:MaxErrorBodyBytes]
		}
		_ = dl.Context.SetExtension(ExtensionErrorData, base64.StdEncoding.EncodeToString(body))
	}
	return &dl
}
