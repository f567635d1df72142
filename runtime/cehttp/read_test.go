package cehttp

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
)

const validBinaryHeaders = "Ce-Specversion: 1.0\r\nCe-Id: 42\r\nCe-Source: /orders\r\nCe-Type: order.created\r\n"

func strPtr(s string) *string { return &s }

func mustURIRef(t *testing.T, s string) types.URIRef {
	t.Helper()
	u := types.ParseURIRef(s)
	if u == nil {
		t.Fatalf("bad URI-reference %q", s)
	}
	return *u
}

func TestReadRequestAccepts(t *testing.T) {
	when := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	tests := []struct {
		name    string
		headers string
		body    string
		want    func(t *testing.T) *event.Event
	}{{
		name:    "binary with every attribute and an extension",
		headers: validBinaryHeaders + "Ce-Subject: 123\r\nCe-Time: 2024-05-06T07:08:09.123456789Z\r\nCe-Dataschema: https://example.com/s.json\r\nContent-Type: application/json\r\nCe-Tenant: acme\r\n",
		body:    `{"total": 3}` + "\n",
		want: func(t *testing.T) *event.Event {
			return &event.Event{
				Context: &event.EventContextV1{
					ID: "42", Source: mustURIRef(t, "/orders"), Type: "order.created",
					Subject: strPtr("123"), Time: &types.Timestamp{Time: when},
					DataSchema:      types.ParseURI("https://example.com/s.json"),
					DataContentType: strPtr("application/json"),
					Extensions:      map[string]any{"tenant": "acme"},
				},
				DataEncoded: []byte(`{"total": 3}` + "\n"),
			}
		},
	}, {
		name:    "binary without a body",
		headers: validBinaryHeaders,
		want: func(t *testing.T) *event.Event {
			return &event.Event{Context: &event.EventContextV1{ID: "42", Source: mustURIRef(t, "/orders"), Type: "order.created"}}
		},
	}, {
		name:    "binary keeps payload bytes that are not UTF-8",
		headers: validBinaryHeaders + "Content-Type: application/octet-stream\r\n",
		body:    "\xff\x00\xfe",
		want: func(t *testing.T) *event.Event {
			return &event.Event{
				Context:     &event.EventContextV1{ID: "42", Source: mustURIRef(t, "/orders"), Type: "order.created", DataContentType: strPtr("application/octet-stream")},
				DataEncoded: []byte("\xff\x00\xfe"),
			}
		},
	}, {
		name:    "binary trims white space as the SDK does and folds extension case",
		headers: "Ce-Specversion: 1.0\r\nCe-Id:  42 \r\nCe-Source: /orders\r\nCe-Type: order.created\r\nCE-TENANT: acme\r\n",
		want: func(t *testing.T) *event.Event {
			return &event.Event{Context: &event.EventContextV1{ID: "42", Source: mustURIRef(t, "/orders"), Type: "order.created", Extensions: map[string]any{"tenant": "acme"}}}
		},
	}, {
		name:    "structured",
		headers: "Content-Type: application/cloudevents+json; charset=utf-8\r\n",
		body:    `{"specversion":"1.0","id":"42","source":"/orders","type":"order.created","datacontenttype":"application/json","data":{"total":3},"tenant":"acme","count":7}`,
		want: func(t *testing.T) *event.Event {
			return &event.Event{
				Context: &event.EventContextV1{
					ID: "42", Source: mustURIRef(t, "/orders"), Type: "order.created",
					DataContentType: strPtr("application/json"),
					Extensions:      map[string]any{"tenant": "acme", "count": int32(7)},
				},
				DataEncoded: []byte(`{"total":3}`),
			}
		},
	}, {
		name:    "structured wins over ce- headers",
		headers: "Content-Type: application/cloudevents+json\r\nCe-Specversion: 1.0\r\nCe-Id: other\r\n",
		body:    `{"specversion":"1.0","id":"42","source":"/orders","type":"order.created","data_base64":"/wA="}`,
		want: func(t *testing.T) *event.Event {
			return &event.Event{
				Context:     &event.EventContextV1{ID: "42", Source: mustURIRef(t, "/orders"), Type: "order.created"},
				DataEncoded: []byte{0xff, 0}, DataBase64: true,
			}
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := rawRequest(tt.headers, []byte(tt.body))
			r, err := parseRaw(raw)
			if err != nil {
				t.Fatal(err)
			}
			got, err := ReadRequest(r, 1<<20)
			if err != nil {
				t.Fatalf("ReadRequest: %v", err)
			}
			if diff := cmp.Diff(tt.want(t), got, eventOpts); diff != "" {
				t.Errorf("ReadRequest (-want +got):\n%s", diff)
			}
			compareWithSDK(t, raw)
		})
	}
}

func TestReadRequestRejects(t *testing.T) {
	tests := []struct {
		name      string
		headers   string
		body      string
		attribute string // of the *ParseError
	}{
		{"no content mode", "Content-Type: application/json\r\n", `{}`, "specversion"},
		{"missing id", "Ce-Specversion: 1.0\r\nCe-Source: /s\r\nCe-Type: t\r\n", "", "id"},
		{"blank id", "Ce-Specversion: 1.0\r\nCe-Id: \r\nCe-Source: /s\r\nCe-Type: t\r\n", "", "id"},
		{"missing source", "Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Type: t\r\n", "", "source"},
		{"missing type", "Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: /s\r\n", "", "type"},
		{"specversion 0.3 without id", "Ce-Specversion: 0.3\r\nCe-Source: /s\r\nCe-Type: t\r\n", "", ""},
		{"specversion 2.0", "Ce-Specversion: 2.0\r\nCe-Id: 1\r\nCe-Source: /s\r\nCe-Type: t\r\n", "", "specversion"},
		{"bad time", validBinaryHeaders + "Ce-Time: yesterday\r\n", "", "time"},
		{"bad source", "Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: http://[::1\r\nCe-Type: t\r\n", "", "source"},
		{"relative dataschema", validBinaryHeaders + "Ce-Dataschema: /schema\r\n", "", "dataschema"},
		{"bad content type", validBinaryHeaders + "Content-Type: /json\r\n", "", "datacontenttype"},
		{"bad attribute name", validBinaryHeaders + "Ce-My_ext: x\r\n", "", "My_ext"},
		{"context attribute as an extension", validBinaryHeaders + "Ce-Datacontenttype: text/plain\r\n", "", "datacontenttype"},
		{"malformed JSON", "Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0",`, ""},
		{"trailing garbage after JSON", "Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0","id":"1","source":"/s","type":"t"} x`, ""},
		{"structured without specversion", "Content-Type: application/cloudevents+json\r\n", `{"id":"1","source":"/s","type":"t"}`, ""},
		{"structured 0.3 without type", "Content-Type: application/cloudevents+json\r\n", `{"specversion":"0.3","id":"1","source":"/s"}`, ""},
		{"structured missing type", "Content-Type: application/cloudevents+json\r\n", `{"specversion":"1.0","id":"1","source":"/s"}`, "type"},
		{"ce- header not UTF-8", validBinaryHeaders + "Ce-Ext: caf\xe9\r\n", "", "ext"},
		{"ce-type not UTF-8", "Ce-Specversion: 1.0\r\nCe-Id: 1\r\nCe-Source: /s\r\nCe-Type: \xff\xfe\r\n", "", "type"},
		{"second value of a ce- header not UTF-8", validBinaryHeaders + "Ce-Ext: ok\r\nCe-Ext: \xc3\r\n", "", "ext"},
		{"content type not UTF-8", validBinaryHeaders + "Content-Type: text/plain; charset=\"\xe9\"\r\n", "", "datacontenttype"},
		{"0.3 ce- header not UTF-8", "Ce-Specversion: 0.3\r\nCe-Id: 1\r\nCe-Source: /s\r\nCe-Type: t\r\nCe-Ext: \x80\r\n", "", "ext"},
		{"batched mode", "Content-Type: application/cloudevents-batch+json\r\n", `[]`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := rawRequest(tt.headers, []byte(tt.body))
			r, err := parseRaw(raw)
			if err != nil {
				t.Fatal(err)
			}
			e, err := ReadRequest(r, 1<<20)
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("ReadRequest = %v, %v; want a *ParseError", e, err)
			}
			if pe.Attribute != tt.attribute {
				t.Errorf("ParseError.Attribute = %q, want %q (%v)", pe.Attribute, tt.attribute, err)
			}
			compareWithSDK(t, raw)
		})
	}
}

func TestReadRequestBodyLimit(t *testing.T) {
	body := bytes.Repeat([]byte("x"), 100)
	tests := []struct {
		name    string
		chunked bool
		limit   int64
		wantErr error
	}{
		{"declared length over the limit", false, 99, ErrTooLarge},
		{"chunked body over the limit", true, 99, ErrTooLarge},
		{"declared length at the limit", false, 100, nil},
		{"chunked body at the limit", true, 100, nil},
		{"no limit", true, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := httptest.NewRequest(http.MethodPost, "/", nil)
			if tt.chunked {
				// An io.Reader of unknown length, as a chunked body is.
				r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body)))
				r.ContentLength = -1
			} else {
				r.Body = io.NopCloser(bytes.NewReader(body))
				r.ContentLength = int64(len(body))
			}
			r.Header = http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"1"}, "Ce-Source": {"/s"}, "Ce-Type": {"t"}}
			e, err := ReadRequest(r, tt.limit)
			if !errors.Is(err, tt.wantErr) {
				t.Fatalf("ReadRequest error = %v, want %v", err, tt.wantErr)
			}
			if err == nil && !bytes.Equal(e.DataEncoded, body) {
				t.Errorf("payload = %q, want %q", e.DataEncoded, body)
			}
		})
	}
}

// TestReadRequestMaxBytesReader checks that a limit set by the HTTP server
// with http.MaxBytesReader also reads as ErrTooLarge.
func TestReadRequestMaxBytesReader(t *testing.T) {
	errs := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, 10)
		_, err := ReadRequest(r, 0)
		errs <- err
	}))
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, io.MultiReader(strings.NewReader(strings.Repeat("x", 100))))
	if err != nil {
		t.Fatal(err)
	}
	req.Header = http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"1"}, "Ce-Source": {"/s"}, "Ce-Type": {"t"}}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if err := <-errs; !errors.Is(err, ErrTooLarge) {
		t.Errorf("ReadRequest error = %v, want ErrTooLarge", err)
	}
}

func TestReadReply(t *testing.T) {
	valid := http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"r1"}, "Ce-Source": {"/s"}, "Ce-Type": {"reply"}}
	tests := []struct {
		name      string
		status    int
		header    http.Header
		body      string
		wantReply bool
		wantErr   bool
	}{
		{"200 binary reply", 200, valid, "hi", true, false},
		{"200 structured reply", 200, http.Header{"Content-Type": {MediaTypeStructured}}, `{"specversion":"1.0","id":"r1","source":"/s","type":"reply"}`, true, false},
		{"200 empty body", 200, http.Header{}, "", false, false},
		{"200 body that is no CloudEvent", 200, http.Header{"Content-Type": {"text/plain"}}, "ok", false, false},
		{"200 invalid CloudEvent", 200, http.Header{"Ce-Specversion": {"1.0"}}, "", false, true},
		{"202 with a CloudEvent body is no reply", 202, valid, "hi", false, false},
		{"201 with a CloudEvent body is no reply", 201, valid, "hi", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := &http.Response{StatusCode: tt.status, Header: tt.header, Body: io.NopCloser(strings.NewReader(tt.body)), ContentLength: int64(len(tt.body))}
			got, err := ReadReply(resp, 1<<20)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReadReply error = %v, want error: %t", err, tt.wantErr)
			}
			if (got != nil) != tt.wantReply {
				t.Fatalf("ReadReply = %v, want a reply: %t", got, tt.wantReply)
			}
			if got != nil && got.ID() != "r1" {
				t.Errorf("reply id = %q, want r1", got.ID())
			}
		})
	}
}

// TestReadRequestDoesNotTrustContentLength checks that a huge declared
// length with a short body costs an error, not a huge allocation.
func TestReadRequestDoesNotTrustContentLength(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/", nil)
	r.Body = io.NopCloser(strings.NewReader("short"))
	r.ContentLength = 1 << 40
	r.Header = http.Header{"Ce-Specversion": {"1.0"}, "Ce-Id": {"1"}, "Ce-Source": {"/s"}, "Ce-Type": {"t"}}
	e, err := ReadRequest(r, 0)
	if err != nil {
		t.Fatalf("ReadRequest: %v", err)
	}
	if string(e.DataEncoded) != "short" {
		t.Errorf("payload = %q, want %q", e.DataEncoded, "short")
	}
}
