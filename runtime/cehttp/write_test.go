package cehttp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/knc-dev/knc/internal/routing"
)

// received is what a test subscriber saw.
type received struct {
	header http.Header
	body   []byte
	event  *event.Event
	err    error
}

// newRecorder starts a subscriber on 127.0.0.1 that decodes each request
// with ReadRequest and hands it over.
func newRecorder(t *testing.T) (*httptest.Server, <-chan received) {
	t.Helper()
	ch := make(chan received, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading body: %v", err)
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		r.ContentLength = int64(len(body))
		e, err := ReadRequest(r, 0)
		ch <- received{header: r.Header.Clone(), body: body, event: e, err: err}
		w.WriteHeader(http.StatusAccepted)
	}))
	t.Cleanup(srv.Close)
	return srv, ch
}

func send(t *testing.T, srv *httptest.Server, ch <-chan received, e *event.Event, format string) received {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := NewRequest(ctx, e, srv.URL, format)
	if err != nil {
		t.Fatalf("NewRequest: %v", err)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	resp.Body.Close()
	select {
	case got := <-ch:
		if got.err != nil {
			t.Fatalf("subscriber could not read the event: %v", got.err)
		}
		return got
	case <-ctx.Done():
		t.Fatal("subscriber got nothing")
		return received{}
	}
}

func testEvent(t *testing.T, contentType string, data []byte) *event.Event {
	t.Helper()
	ec := &event.EventContextV1{
		ID: "42", Source: mustURIRef(t, "https://example.com/orders"), Type: "order.created",
		Subject:    strPtr("123"),
		Time:       &types.Timestamp{Time: time.Date(2024, 5, 6, 7, 8, 9, 5, time.UTC)},
		DataSchema: types.ParseURI("https://example.com/schema"),
		Extensions: map[string]any{"tenant": "acme"},
	}
	if contentType != "" {
		ec.DataContentType = strPtr(contentType)
	}
	return &event.Event{Context: ec, DataEncoded: data}
}

func TestNewRequestBinaryHeaders(t *testing.T) {
	srv, ch := newRecorder(t)
	e := testEvent(t, "application/json", []byte(`{"total": 3}`+"\n"))
	got := send(t, srv, ch, e, routing.FormatBinary)
	want := map[string]string{
		"Prefer":         "reply",
		"Ce-Specversion": "1.0",
		"Ce-Id":          "42",
		"Ce-Source":      "https://example.com/orders",
		"Ce-Type":        "order.created",
		"Ce-Subject":     "123",
		"Ce-Time":        "2024-05-06T07:08:09.000000005Z",
		"Ce-Dataschema":  "https://example.com/schema",
		"Ce-Tenant":      "acme",
		"Content-Type":   "application/json",
	}
	gotHeaders := make(map[string]string)
	for k := range want {
		gotHeaders[k] = got.header.Get(k)
	}
	if diff := cmp.Diff(want, gotHeaders); diff != "" {
		t.Errorf("headers (-want +got):\n%s", diff)
	}
	if !bytes.Equal(got.body, e.DataEncoded) {
		t.Errorf("body = %q, want the payload %q unchanged", got.body, e.DataEncoded)
	}
}

func TestNewRequestStructured(t *testing.T) {
	srv, ch := newRecorder(t)
	e := testEvent(t, "application/json", []byte(`{"total":3}`))
	got := send(t, srv, ch, e, routing.FormatJSON)
	if ct := got.header.Get("Content-Type"); ct != MediaTypeStructured {
		t.Errorf("Content-Type = %q, want %q", ct, MediaTypeStructured)
	}
	if p := got.header.Get("Prefer"); p != "reply" {
		t.Errorf("Prefer = %q, want reply", p)
	}
	if got.header.Get("Ce-Id") != "" {
		t.Errorf("structured request carries ce- headers: %v", got.header)
	}
	if diff := cmp.Diff(e, got.event, attributeOpts); diff != "" {
		t.Errorf("event (-sent +received):\n%s", diff)
	}
}

// TestNewRequestKeepsEvents sends events through a real server and reads
// them back with ReadRequest: attributes must be equal and payload bytes
// identical in both modes.
func TestNewRequestKeepsEvents(t *testing.T) {
	srv, ch := newRecorder(t)
	tests := []struct {
		name        string
		contentType string
		data        []byte
		modify      func(*event.Event)
		// wantStructured is set when binary mode cannot carry the event.
		wantStructured bool
	}{
		{name: "compact JSON", contentType: "application/json", data: []byte(`{"a":[1,2]}`)},
		{name: "JSON with a trailing newline", contentType: "application/json", data: []byte("{\"a\": 1}\n")},
		{name: "invalid JSON labelled JSON", contentType: "application/json", data: []byte(`{"a":`)},
		{name: "JSON without a content type", data: []byte(`[1, 2]`)},
		{name: "text", contentType: "text/plain; charset=utf-8", data: []byte("héllo \"world\"\n\t")},
		{name: "bytes that are not UTF-8", contentType: "application/octet-stream", data: []byte{0xff, 0, 0xfe, '\n'}},
		{name: "no data", contentType: "", data: nil},
		{name: "subject with a newline", contentType: "text/plain", data: []byte("x"),
			modify: func(e *event.Event) { e.SetSubject("a\nb") }, wantStructured: true},
		{name: "extension with a leading space", contentType: "text/plain", data: []byte("x"),
			modify: func(e *event.Event) { e.SetExtension("pad", " x") }, wantStructured: true},
		{name: "typed extensions", contentType: "text/plain", data: []byte("x"),
			modify: func(e *event.Event) { e.SetExtension("count", 7); e.SetExtension("flag", true) }},
		{name: "time with an offset", data: []byte("{}"),
			modify: func(e *event.Event) {
				e.SetTime(time.Date(2024, 1, 2, 3, 4, 5, 0, time.FixedZone("", 2*3600)))
			}},
	}
	for _, tt := range tests {
		for _, format := range []string{routing.FormatBinary, routing.FormatJSON} {
			t.Run(tt.name+"/"+format, func(t *testing.T) {
				e := testEvent(t, tt.contentType, tt.data)
				if tt.modify != nil {
					tt.modify(e)
				}
				got := send(t, srv, ch, e, format)
				structured := got.header.Get("Content-Type") == MediaTypeStructured
				if want := format == routing.FormatJSON || tt.wantStructured; structured != want {
					t.Errorf("sent in structured mode: %t, want %t", structured, want)
				}
				if !bytes.Equal(got.event.DataEncoded, e.DataEncoded) {
					t.Errorf("payload = %q, want %q", got.event.DataEncoded, e.DataEncoded)
				}
				opts := cmp.Options{attributeOpts, cmpopts.IgnoreFields(event.Event{}, "DataBase64")}
				if format == routing.FormatBinary {
					// Binary mode carries every extension as a string.
					opts = append(opts, cmp.Transformer("extensionText", func(m map[string]any) map[string]string {
						out := make(map[string]string, len(m))
						for k, v := range m {
							out[k], _ = types.Format(v)
						}
						return out
					}))
				}
				if diff := cmp.Diff(e, got.event, opts); diff != "" {
					t.Errorf("event (-sent +received):\n%s", diff)
				}
			})
		}
	}
}

func TestNewRequestRejectsEventWithoutContext(t *testing.T) {
	if _, err := NewRequest(context.Background(), &event.Event{}, "http://127.0.0.1:1/", routing.FormatBinary); err == nil {
		t.Fatal("NewRequest accepted an event without a context")
	}
}
