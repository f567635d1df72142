package cehttp

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/cloudevents/sdk-go/v2/binding"
	"github.com/cloudevents/sdk-go/v2/event"
	sdkhttp "github.com/cloudevents/sdk-go/v2/protocol/http"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
)

// eventOpts compares events field by field; url.Userinfo hides its fields.
var eventOpts = cmp.Options{
	cmp.Comparer(func(a, b *url.Userinfo) bool {
		if a == nil || b == nil {
			return a == b
		}
		return a.String() == b.String()
	}),
}

// attributeOpts compares events by their CloudEvents attribute values: a
// URI that reads back from its text is equal even when net/url fills in a
// different but equivalent struct.
var attributeOpts = cmp.Options{
	cmp.Comparer(func(a, b types.URIRef) bool { return a.String() == b.String() }),
	cmp.Comparer(func(a, b types.URI) bool { return a.String() == b.String() }),
}

// rawRequest builds the bytes of an HTTP/1.1 POST with the given header
// lines ("Name: value", separated by \r\n) and body.
func rawRequest(headers string, body []byte) []byte {
	var b bytes.Buffer
	b.WriteString("POST /brokers/ns/default HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	b.WriteString("Content-Length: " + strconv.Itoa(len(body)) + "\r\n")
	if headers != "" {
		b.WriteString(strings.TrimRight(headers, "\r\n"))
		b.WriteString("\r\n")
	}
	b.WriteString("\r\n")
	b.Write(body)
	return b.Bytes()
}

// parseRaw parses raw the way net/http's server does.
func parseRaw(raw []byte) (*http.Request, error) {
	return http.ReadRequest(bufio.NewReader(bytes.NewReader(raw)))
}

// sdkDecode is the reference: how sdk-go's HTTP protocol turns a request
// into a valid event.
func sdkDecode(r *http.Request) (e *event.Event, err error) {
	defer func() {
		if p := recover(); p != nil {
			e, err = nil, fmt.Errorf("sdk panicked: %v", p)
		}
	}()
	e, err = binding.ToEvent(context.Background(), sdkhttp.NewMessageFromHttpRequest(r))
	if err != nil {
		return nil, err
	}
	if err := e.Validate(); err != nil {
		return nil, err
	}
	return e, nil
}

// compareWithSDK runs ReadRequest and the SDK on the same raw request and
// reports any difference in acceptance or in the decoded event.
func compareWithSDK(t *testing.T, raw []byte) {
	t.Helper()
	r1, err := parseRaw(raw)
	if err != nil {
		return // net/http would not have served it
	}
	r2, _ := parseRaw(raw)
	got, gotErr := ReadRequest(r1, 0)
	if modeOf(r1.Header) == modeBinary && checkUTF8(r1.Header) != nil {
		// knc refuses a binary-mode header that is not UTF-8, which the
		// SDK passes on raw: the one difference on purpose.
		if gotErr == nil {
			t.Fatalf("ReadRequest accepted a header that is not UTF-8:\n%q", raw)
		}
		return
	}
	want, wantErr := sdkDecode(r2)
	switch {
	case gotErr != nil && wantErr != nil:
		return
	case gotErr != nil:
		t.Fatalf("ReadRequest rejected what the SDK accepts:\n%q\nerror: %v\nsdk event: %s", raw, gotErr, want)
	case wantErr != nil:
		t.Fatalf("ReadRequest accepted what the SDK rejects:\n%q\nsdk error: %v\nevent: %s", raw, wantErr, got)
	}
	if diff := cmp.Diff(want, got, eventOpts); diff != "" {
		t.Fatalf("ReadRequest and the SDK disagree on\n%q\n(-sdk +knc):\n%s", raw, diff)
	}
}
