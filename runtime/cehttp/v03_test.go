package cehttp

import (
	"bytes"
	"context"
	"io"
	"testing"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"

	"github.com/knc-dev/knc/internal/routing"
)

// v03Requests are 0.3 events in both content modes, with every attribute
// that 0.3 has and 1.0 has not.
var v03Requests = map[string]struct{ headers, body string }{
	"binary": {"Ce-Specversion: 0.3\r\nCe-Id: 1\r\nCe-Source: /s\r\nCe-Type: t\r\nCe-Subject: sub\r\n" +
		"Ce-Time: 2024-05-06T07:08:09Z\r\nCe-Schemaurl: http://e/schema\r\nCe-Myext: v\r\nContent-Type: application/json\r\n", `{"a":1}`},
	"structured": {"Content-Type: application/cloudevents+json\r\n",
		`{"specversion":"0.3","id":"1","source":"/s","type":"t","schemaurl":"http://e/schema","datacontentencoding":"base64","datacontenttype":"application/octet-stream","data":"AAEC","myext":"v"}`},
}

// TestV03StaysV03 checks that a 0.3 event is read as 0.3, reads back from
// NATS (a message and a batch record) equal to what was read, and is
// delivered as 0.3 with the same attributes, in both delivery formats.
func TestV03StaysV03(t *testing.T) {
	for name, in := range v03Requests {
		t.Run(name, func(t *testing.T) {
			r, err := parseRaw(rawRequest(in.headers, []byte(in.body)))
			if err != nil {
				t.Fatal(err)
			}
			e, err := ReadRequest(r, 1<<20)
			if err != nil {
				t.Fatal(err)
			}
			if _, ok := e.Context.(*event.EventContextV03); !ok {
				t.Fatalf("read a %T, want a 0.3 context", e.Context)
			}
			stored, err := FromNATS(ToNATS(e, "s"))
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(e, stored, eventOpts); d != "" {
				t.Errorf("through NATS (-read +stored):\n%s", d)
			}
			rec, err := AppendEventRecord(nil, e)
			if err != nil {
				t.Fatal(err)
			}
			fromRecord, _, _, err := RecordEvent(rec, "s", RecordExtras{})
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(e, fromRecord, eventOpts); d != "" {
				t.Errorf("through a batch record (-read +stored):\n%s", d)
			}
			for _, format := range []string{routing.FormatBinary, routing.FormatJSON} {
				req, err := NewRequest(context.Background(), stored, "http://127.0.0.1/x", format)
				if err != nil {
					t.Fatal(err)
				}
				if req.Header.Get("Prefer") != "reply" {
					t.Errorf("%s: Prefer = %q", format, req.Header.Get("Prefer"))
				}
				body, _ := io.ReadAll(req.Body)
				req.Body = io.NopCloser(bytes.NewReader(body))
				delivered, err := sdkDecode(req)
				if err != nil {
					t.Fatalf("%s: the delivered request is no event: %v", format, err)
				}
				want := e
				if format == routing.FormatBinary && e.DataBase64 {
					// Binary mode carries the bytes themselves: base64 is
					// a structured-mode encoding, which the SDK drops.
					c := e.Clone()
					c.DataBase64 = false
					_ = c.Context.SetExtension("datacontentencoding", nil)
					c.Context.(*event.EventContextV03).DataContentEncoding = nil
					want = &c
				}
				if d := cmp.Diff(want, delivered, eventOpts); d != "" {
					t.Errorf("%s delivery (-read +delivered):\n%s", format, d)
				}
			}
		})
	}
}

// TestV03StoredVersionHeader checks that the stored message says 0.3, so
// that nothing on the way upgrades it.
func TestV03StoredVersionHeader(t *testing.T) {
	in := v03Requests["binary"]
	r, _ := parseRaw(rawRequest(in.headers, []byte(in.body)))
	e, err := ReadRequest(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := ToNATS(e, "s")
	if got := m.Header.Get("ce-specversion"); got != "0.3" {
		t.Errorf("stored ce-specversion = %q, want 0.3", got)
	}
	bad := &nats.Msg{Subject: "s", Header: nats.Header{"ce-specversion": {"0.2"}, "ce-id": {"1"}, "ce-source": {"/s"}, "ce-type": {"t"}}}
	if _, err := FromNATS(bad); err == nil {
		t.Error("FromNATS read a 0.2 message")
	}
}
