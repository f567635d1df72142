package cehttp

import (
	"errors"
	"fmt"
	"net/url"
	"testing"
	"time"

	"github.com/cloudevents/sdk-go/v2/event"
	"github.com/cloudevents/sdk-go/v2/types"
	"github.com/google/go-cmp/cmp"
	"github.com/nats-io/nats.go"
)

// TestBatchRoundTrip checks that events read from a batch, stored in a real
// JetStream stream, equal the events stored; records are written from
// messages (AppendRecord) and straight from events (AppendEventRecord).
func TestBatchRoundTrip(t *testing.T) {
	store := startJetStream(t)
	var events []*event.Event
	for _, modify := range []func(*event.Event){
		func(*event.Event) {},
		func(e *event.Event) {
			ec := e.Context.(*event.EventContextV1)
			ec.Subject, ec.Time, ec.DataSchema, ec.DataContentType, ec.Extensions = nil, nil, nil, nil, nil
			e.DataEncoded = nil
		},
		func(e *event.Event) {
			e.SetSubject(" a\r\nb%20 ")
			e.SetExtension("pad", "\tx ")
			e.SetID("%")
		},
		func(e *event.Event) {
			e.SetExtension("count", int32(-7))
			e.SetExtension("blob", []byte{0, 1, 0xff})
			e.SetExtension("at", types.Timestamp{Time: time.Date(2020, 1, 1, 0, 0, 0, 1, time.FixedZone("", -3600))})
			e.SetExtension("link", types.URI{URL: url.URL{Scheme: "https", Host: "example.com", Path: "/x"}})
		},
		func(e *event.Event) {
			e.DataEncoded = []byte{0xff, 0, '\r', '\n'}
			e.DataBase64 = true
		},
	} {
		e := testEvent(t, "application/json", []byte(" {\"a\": 1}\n"))
		modify(e)
		events = append(events, e)
	}
	var batch []byte
	for i, e := range events {
		var err error
		if i%2 == 0 {
			m := ToNATS(e, "events.x")
			m.Header["knc-extra"] = []string{"one", "two"}
			batch, err = AppendRecord(batch, m.Header, m.Data)
		} else {
			batch, err = AppendEventRecord(batch, e, "knc-extra", "one", "knc-extra", "two")
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := store.js.PublishMsg(&nats.Msg{Subject: "events.batch", Header: nats.Header{HeaderBatch: {BatchVersion}}, Data: batch}); err != nil {
		t.Fatal(err)
	}
	msgs, err := store.sub.Fetch(1, nats.MaxWait(10*time.Second))
	if err != nil || len(msgs) != 1 {
		t.Fatalf("fetching: %d messages, %v", len(msgs), err)
	}
	if !IsBatch(msgs[0].Header) || CheckBatch(msgs[0].Header) != nil {
		t.Fatalf("the stored message is not a batch: %v", msgs[0].Header)
	}
	rest := msgs[0].Data
	for i, want := range events {
		var h nats.Header
		var data []byte
		h, data, rest, err = NextRecord(rest)
		if err != nil {
			t.Fatalf("record %d: %v", i, err)
		}
		if diff := cmp.Diff([]string{"one", "two"}, h["knc-extra"]); diff != "" {
			t.Errorf("record %d: a header with two values (-want +got):\n%s", i, diff)
		}
		got, err := FromNATS(&nats.Msg{Subject: "events.x", Header: h, Data: data})
		if err != nil {
			t.Fatalf("record %d: FromNATS: %v", i, err)
		}
		if diff := cmp.Diff(want, got, attributeOpts); diff != "" {
			t.Errorf("record %d (-stored +read):\n%s", i, diff)
		}
	}
	if len(rest) != 0 {
		t.Errorf("%d bytes after the last record", len(rest))
	}
}

func TestCheckBatch(t *testing.T) {
	for _, h := range []nats.Header{{}, {HeaderBatch: {"2"}}, {HeaderBatch: {"1", "1"}}} {
		if CheckBatch(h) == nil {
			t.Errorf("CheckBatch(%v) = nil, want an error", h)
		}
	}
}

// FuzzNextRecord checks that no input makes NextRecord panic or read out of
// bounds, and that every record it accepts encodes to a record that reads
// back the same.
func FuzzNextRecord(f *testing.F) {
	one, _ := AppendRecord(nil, nats.Header{"ce-id": {"1"}, "ce-type": {"t"}}, []byte("data"))
	two, _ := AppendRecord(nil, nats.Header{"a": {"1", "2"}}, nil)
	two, _ = AppendRecord(two, nats.Header{}, []byte{0})
	f.Add(one)
	f.Add(two)
	f.Add([]byte{0x80})
	f.Add([]byte{1, 0, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, batch []byte) {
		for len(batch) > 0 {
			h, data, rest, err := NextRecord(batch)
			if err != nil {
				return
			}
			if len(rest) >= len(batch) {
				t.Fatalf("no progress: %d bytes left of %d", len(rest), len(batch))
			}
			again, err := AppendRecord(nil, h, data)
			if err != nil {
				t.Fatal(err)
			}
			h2, data2, rest2, err := NextRecord(again)
			if err != nil || len(rest2) != 0 {
				t.Fatalf("re-encoded record: %v, %d bytes left", err, len(rest2))
			}
			if diff := cmp.Diff(h, h2); diff != "" {
				t.Fatalf("headers (-read +re-encoded):\n%s", diff)
			}
			if string(data) != string(data2) {
				t.Fatalf("data %q, re-encoded %q", data, data2)
			}
			batch = rest
		}
	})
}

// TestAppendEventRecordMatchesToNATS checks that a record written from an
// event holds exactly the headers and data of ToNATS.
func TestAppendEventRecordMatchesToNATS(t *testing.T) {
	e := testEvent(t, "application/json", []byte(`{"a":1}`))
	e.SetExtension("count", int32(3))
	e.SetExtension("flag", true)
	e.SetSubject(" padded ")
	rec, err := AppendEventRecord(nil, e, "knc-accepted", "42")
	if err != nil {
		t.Fatal(err)
	}
	h, data, rest, err := NextRecord(rec)
	if err != nil || len(rest) != 0 {
		t.Fatalf("NextRecord: %v, %d bytes left", err, len(rest))
	}
	want := ToNATS(e, "x")
	want.Header["knc-accepted"] = []string{"42"}
	if diff := cmp.Diff(want.Header, h); diff != "" {
		t.Errorf("headers (-ToNATS +record):\n%s", diff)
	}
	if string(data) != string(want.Data) {
		t.Errorf("data %q, want %q", data, want.Data)
	}
}

func TestTooManyAttributes(t *testing.T) {
	h := nats.Header{}
	for i := range maxRecordPairs + 1 {
		h[fmt.Sprint(i)] = []string{""}
	}
	got, err := AppendRecord([]byte("x"), h, nil)
	if !errors.Is(err, ErrTooManyAttributes) || string(got) != "x" {
		t.Errorf("AppendRecord = %q, %v; want the batch unchanged and ErrTooManyAttributes", got, err)
	}
}

// FuzzEventRecordMatchesToNATS checks that a record written straight from
// an event holds the headers and data ToNATS gives the event, and reads
// back as the same event.
func FuzzEventRecordMatchesToNATS(f *testing.F) {
	f.Add("1", "/s", "t", "", "ext", "v", int32(0), false, []byte(nil))
	f.Add(" id ", "https://example.com/a%20b", "t\n", "sub\r\nject", "count", "%41", int32(-5), true, []byte{0xff, 0})
	f.Fuzz(func(t *testing.T, id, source, typ, subject, extName, extValue string, extInt int32, extBool bool, data []byte) {
		ec := &event.EventContextV1{ID: id, Type: typ}
		u, err := url.Parse(source)
		if err != nil {
			return
		}
		ec.Source = types.URIRef{URL: *u}
		if subject != "" {
			ec.Subject = &subject
		}
		if _, err := extensionName(extName); err != nil || extName != extValueName(extName) {
			return
		}
		ec.Extensions = map[string]any{extName: extValue, "n" + extName: extInt, "b" + extName: extBool}
		if validateContext(ec) != nil {
			return
		}
		e := &event.Event{Context: ec}
		if len(data) > 0 {
			e.DataEncoded = data
		}
		rec, err := AppendEventRecord(nil, e)
		if err != nil {
			t.Fatal(err)
		}
		h, got, rest, err := NextRecord(rec)
		if err != nil || len(rest) != 0 {
			t.Fatalf("NextRecord: %v, %d bytes left", err, len(rest))
		}
		want := ToNATS(e, "x")
		if diff := cmp.Diff(want.Header, h); diff != "" {
			t.Fatalf("headers (-ToNATS +record):\n%s", diff)
		}
		if string(got) != string(want.Data) {
			t.Fatalf("data %q, want %q", got, want.Data)
		}
		back, err := FromNATS(&nats.Msg{Subject: "x", Header: h, Data: got})
		if err != nil {
			t.Fatalf("FromNATS: %v", err)
		}
		if diff := cmp.Diff(e, back, attributeOpts); diff != "" {
			t.Fatalf("event (-written +read):\n%s", diff)
		}
	})
}
